// rtc: parameter types read from mangled kernel names, compared with the
// declared signature. NVRTC runs on the CPU, so real lowered names are
// checked here too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/error.hpp"
#include "cudag/rtc.hpp"
#include "cudag/rtc_signature.hpp"

namespace rtc = cudag::rtc;
using strings = std::vector<std::string>;

namespace sample {
struct particle {
  float x, y;
};
}  // namespace sample

TEST(RtcSignature, ReadsTemplateKernelWithSubstitutions) {
  // template <class T> __global__ void scale(T* x, T a, int n), T = float
  const auto sig = rtc::parse_lowered_name("_Z5scaleIfEvPT_S0_i");
  ASSERT_TRUE(sig);
  EXPECT_EQ(sig->function, "scale<float>");
  EXPECT_EQ(sig->parameters, (strings{"float*", "float", "int"}));
  EXPECT_EQ(sig->to_string(), "void scale<float>(float*, float, int)");
}

TEST(RtcSignature, ReadsPlainNestedAndQualifiedKernels) {
  const auto axpy = rtc::parse_lowered_name("_Z4axpyPKfPffi");
  ASSERT_TRUE(axpy);
  EXPECT_EQ(axpy->parameters, (strings{"const float*", "float*", "float", "int"}));

  const auto nested = rtc::parse_lowered_name("_ZN2ns6kernelEPKdPdm");
  ASSERT_TRUE(nested);
  EXPECT_EQ(nested->function, "ns::kernel");
  EXPECT_EQ(nested->parameters, (strings{"const double*", "double*", "unsigned long"}));

  const auto none = rtc::parse_lowered_name("_Z4tickv");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->parameters.empty());

  // const pointer to const pointer, and a struct in a namespace used twice (S0_)
  const auto deep = rtc::parse_lowered_name("_Z4moveN6sample8particleEPS0_PKPKf");
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->parameters,
            (strings{"sample::particle", "sample::particle*", "const float* const*"}));
}

TEST(RtcSignature, ReadsNonTypeTemplateArguments) {
  const auto sig = rtc::parse_lowered_name("_Z6reduceILi256ELb1EEvPfi");
  ASSERT_TRUE(sig);
  EXPECT_EQ(sig->function, "reduce<256, true>");
  EXPECT_EQ(sig->parameters, (strings{"float*", "int"}));
}

TEST(RtcSignature, ReadsBuiltinTypesOfTheDFamily) {
  const auto scalars = rtc::parse_lowered_name("_Z1fDhDnDsDiDu");
  ASSERT_TRUE(scalars);
  EXPECT_EQ(scalars->parameters,
            (strings{"_Float16", "std::nullptr_t", "char16_t", "char32_t", "char8_t"}));
  const auto floats = rtc::parse_lowered_name("_Z1fDF16bDF32_DF32xPDF64_");
  ASSERT_TRUE(floats);
  EXPECT_EQ(floats->parameters, (strings{"std::bfloat16_t", "_Float32", "_Float32x", "_Float64*"}));
  // A vector type is a substitution candidate: S_ names it again.
  const auto vectors = rtc::parse_lowered_name("_Z1fDv4_fS_");
  ASSERT_TRUE(vectors);
  EXPECT_EQ(vectors->parameters, (strings{"float __vector(4)", "float __vector(4)"}));
  try {
    (void)rtc::parse_lowered_name("_Z1fDq");
    FAIL() << "an unknown D code was read";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown type code 'Dq'"), std::string::npos) << e.what();
  }
}

TEST(RtcSignature, ReadsTemplateArgumentPacks) {
  const auto sig = rtc::parse_lowered_name("_Z4packIJifELi3EEvPi");
  ASSERT_TRUE(sig);
  EXPECT_EQ(sig->function, "pack<int, float, 3>");
  EXPECT_EQ(sig->parameters, (strings{"int*"}));
  try {
    (void)rtc::parse_lowered_name("_Z4packIJif");
    FAIL() << "an unterminated pack was read";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("unterminated template argument pack"), std::string::npos)
        << e.what();
  }
}

TEST(RtcSignature, ExternCNameHasNoTypes) {
  EXPECT_FALSE(rtc::parse_lowered_name("saxpy"));
  EXPECT_NO_THROW(rtc::check_signature("saxpy", "saxpy", {"float*"}));
}

TEST(RtcSignature, UnsupportedManglingIsNamed) {
  try {
    (void)rtc::parse_lowered_name("_Z1fPFviE");
    FAIL() << "a function-pointer parameter was read";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("function types are not supported"), std::string::npos)
        << e.what();
  }
}

TEST(RtcSignature, DeclaredSideUsesTheSameSpelling) {
  EXPECT_EQ((rtc::declared_parameters<void(float*, const float*, int, unsigned long)>::get()),
            (strings{"float*", "const float*", "int", "unsigned long"}));
  EXPECT_EQ((rtc::declared_parameters<void(sample::particle*, const double* const*)>::get()),
            (strings{"sample::particle*", "const double* const*"}));
  EXPECT_EQ(rtc::demangle_type("PVKi"), "const volatile int*");
}

TEST(RtcSignature, SignatureTextSpellsADeclaration) {
  EXPECT_EQ(rtc::signature_text("", {"float*", "int"}), "void(float*, int)");
  EXPECT_EQ(rtc::signature_text("scale<float>", {"float*", "float", "int"}),
            "void scale<float>(float*, float, int)");
  EXPECT_EQ(rtc::signature_text("tick", {}), "void tick()");
  EXPECT_EQ(rtc::signature_text("", {}), "void()");
}

TEST(RtcSignature, MismatchShowsBothSignatures) {
  try {
    rtc::check_signature("scale<float>", "_Z5scaleIfEvPT_S0_i",
                         rtc::declared_parameters<void(float*, double, int)>::get());
    FAIL() << "a mismatched signature was accepted";
  } catch (const cudag::error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("compiled: void scale<float>(float*, float, int)"), std::string::npos)
        << message;
    EXPECT_NE(message.find("declared: void scale<float>(float*, double, int)"), std::string::npos)
        << message;
    EXPECT_NE(message.find("parameter 1"), std::string::npos) << message;
    EXPECT_EQ(e.node(), "scale<float>");
  }
  EXPECT_THROW(rtc::check_signature("scale<float>", "_Z5scaleIfEvPT_S0_i",
                                    rtc::declared_parameters<void(float*, float)>::get()),
               cudag::error);
  EXPECT_NO_THROW(rtc::check_signature("scale<float>", "_Z5scaleIfEvPT_S0_i",
                                       rtc::declared_parameters<void(float*, float, int)>::get()));
}

// Real lowered names from NVRTC (no GPU needed for a given architecture).
TEST(RtcSignature, NvrtcLoweredNamesMatchDeclarations) {
  const rtc::source src{"shapes.cu", R"(
    namespace sample { struct particle { float x, y; }; }
    template <class T, int N>
    __global__ void fill(T* out, const T* in, T value, int n) {}
    namespace ns { __global__ void move(sample::particle* p, const sample::particle* q, unsigned long n) {} }
    extern "C" __global__ void plain(float* x) {}
  )"};
  rtc::options opts;
  opts.architecture = "sm_90";
  const std::vector<std::string> names{"fill<float, 4>", "fill<double, 8>", "ns::move", "plain"};
  const auto program = rtc::compile(src, names, opts);
  ASSERT_FALSE(program->cubin.empty());

  const auto fill = rtc::parse_lowered_name(program->lowered_name("fill<float, 4>"));
  ASSERT_TRUE(fill);
  EXPECT_EQ(fill->function, "fill<float, 4>");
  EXPECT_EQ(fill->parameters, (strings{"float*", "const float*", "float", "int"}));
  const auto fill8 = rtc::parse_lowered_name(program->lowered_name("fill<double, 8>"));
  ASSERT_TRUE(fill8);
  EXPECT_EQ(fill8->to_string(), "void fill<double, 8>(double*, const double*, double, int)");
  const auto move = rtc::parse_lowered_name(program->lowered_name("ns::move"));
  ASSERT_TRUE(move);
  EXPECT_EQ(move->function, "ns::move");
  EXPECT_EQ(move->parameters,
            (strings{"sample::particle*", "const sample::particle*", "unsigned long"}));
  EXPECT_NO_THROW(rtc::check_signature(
      "fill<double, 8>", program->lowered_name("fill<double, 8>"),
      rtc::declared_parameters<void(double*, const double*, double, int)>::get()));
  EXPECT_NO_THROW(rtc::check_signature(
      "ns::move", program->lowered_name("ns::move"),
      rtc::declared_parameters<void(sample::particle*, const sample::particle*, unsigned long)>::get()));
  EXPECT_THROW(rtc::check_signature("ns::move", program->lowered_name("ns::move"),
                                    rtc::declared_parameters<void(sample::particle*, int)>::get()),
               cudag::error);
  EXPECT_EQ(program->lowered_name("plain"), "plain");
}
