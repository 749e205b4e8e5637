// A reader of the part of the Itanium C++ ABI mangling that kernel names use:
// (nested, template) function names and parameter types built from builtin,
// class, pointer, reference, cv-qualified, array and template-parameter
// types, with the ABI's substitutions (S_, S0_, ...) and template-parameter
// references (T_, T0_, ...) resolved. It prints types as C++ source spells
// them; it does not aim to be a full demangler.
#include "cudag/rtc_signature.hpp"

#include <cctype>
#include <cstddef>
#include <string>
#include <utility>

#include "cudag/error.hpp"

namespace cudag::rtc {
namespace {

class type_reader {
 public:
  explicit type_reader(std::string_view text) : text_(text) {}

  [[nodiscard]] bool done() const noexcept { return pos_ >= text_.size(); }
  [[nodiscard]] char peek(std::size_t ahead = 0) const noexcept {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool consume(char c) noexcept {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "'");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw error("rtc: cannot read the mangled name '" + std::string(text_) + "' at position " +
                std::to_string(pos_) + ": " + what);
  }

  // <encoding> of a function: <name> [<return type> if a template] <parameter types>
  lowered_signature function() {
    lowered_signature sig;
    std::vector<std::string> own_template_args;
    sig.function = name(&own_template_args, /*is_type=*/false);
    function_template_args_ = std::move(own_template_args);
    if (has_template_args_) (void)type();  // template functions mangle their return type
    while (!done() && peek() != '.') sig.parameters.push_back(type());
    if (sig.parameters.size() == 1 && sig.parameters[0] == "void") sig.parameters.clear();
    return sig;
  }

  std::string type() {
    const char c = peek();
    if (const char* b = builtin(c)) {
      ++pos_;
      return b;
    }
    switch (c) {
      case 'P': ++pos_; return remember(declarator(type(), "*"));
      case 'R': ++pos_; return remember(declarator(type(), "&"));
      case 'O': ++pos_; return remember(declarator(type(), "&&"));
      case 'K':
      case 'V':
      case 'r': return remember(qualified());
      case 'D': return d_type();
      case 'u': {  // vendor extended type
        ++pos_;
        return remember(source_name());
      }
      case 'A': return remember(array());
      case 'T': {
        std::string t = template_param();
        remember(t);
        if (peek() == 'I') t = remember(t + template_args(nullptr));
        return t;
      }
      case 'S': {
        if (peek(1) == 't') return name(nullptr, /*is_type=*/true);
        std::string t = substitution();
        if (peek() == 'I') t = remember(t + template_args(nullptr));
        return t;
      }
      case 'N': return name(nullptr, /*is_type=*/true);
      case 'F': fail("function types are not supported");
      default:
        if (std::isdigit(static_cast<unsigned char>(c))) return name(nullptr, /*is_type=*/true);
        fail(std::string("unknown type code '") + c + "'");
    }
  }

 private:
  static const char* builtin(char c) noexcept {
    switch (c) {
      case 'v': return "void";
      case 'w': return "wchar_t";
      case 'b': return "bool";
      case 'c': return "char";
      case 'a': return "signed char";
      case 'h': return "unsigned char";
      case 's': return "short";
      case 't': return "unsigned short";
      case 'i': return "int";
      case 'j': return "unsigned int";
      case 'l': return "long";
      case 'm': return "unsigned long";
      case 'x': return "long long";
      case 'y': return "unsigned long long";
      case 'n': return "__int128";
      case 'o': return "unsigned __int128";
      case 'f': return "float";
      case 'd': return "double";
      case 'e': return "long double";
      case 'g': return "__float128";
      case 'z': return "...";
      default: return nullptr;
    }
  }

  // "const float" + "*" -> "const float*"
  static std::string declarator(std::string inner, std::string_view suffix) {
    return inner + std::string(suffix);
  }

  std::string qualified() {
    bool is_const = false, is_volatile = false, is_restrict = false;
    for (;;) {
      if (consume('r')) is_restrict = true;
      else if (consume('V')) is_volatile = true;
      else if (consume('K')) is_const = true;
      else break;
    }
    std::string inner = type();
    std::string qualifiers;
    if (is_const) qualifiers += "const";
    if (is_volatile) qualifiers += qualifiers.empty() ? "volatile" : " volatile";
    if (is_restrict) qualifiers += qualifiers.empty() ? "__restrict__" : " __restrict__";
    // West const reads naturally except after a declarator: "float* const".
    const char last = inner.empty() ? ' ' : inner.back();
    if (last == '*' || last == '&') return inner + " " + qualifiers;
    return qualifiers + " " + inner;
  }

  std::string d_type() {
    ++pos_;  // 'D'
    const char c = peek();
    ++pos_;
    switch (c) {
      case 'h': return "_Float16";
      case 'n': return "std::nullptr_t";
      case 's': return "char16_t";
      case 'i': return "char32_t";
      case 'u': return "char8_t";
      case 'F': {
        const std::size_t bits = number();
        if (consume('b')) return "std::bfloat16_t";  // DF16b, no closing '_'
        if (consume('x')) return "_Float" + std::to_string(bits) + "x";
        expect('_');
        return "_Float" + std::to_string(bits);
      }
      case 'v': {
        const std::size_t lanes = number();
        expect('_');
        return remember(type() + " __vector(" + std::to_string(lanes) + ")");  // lanes, as c++filt spells it
      }
      default: fail(std::string("unknown type code 'D") + c + "'");
    }
  }

  std::string array() {
    ++pos_;  // 'A'
    std::string extent;
    while (std::isdigit(static_cast<unsigned char>(peek()))) extent += text_[pos_++];
    expect('_');
    return type() + "[" + extent + "]";
  }

  std::size_t number() {
    if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("expected a number");
    std::size_t n = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) n = n * 10 + std::size_t(text_[pos_++] - '0');
    return n;
  }

  std::string source_name() {
    const std::size_t length = number();
    if (pos_ + length > text_.size()) fail("a name runs past the end");
    std::string id(text_.substr(pos_, length));
    pos_ += length;
    if (id.starts_with("_GLOBAL__N")) return "(anonymous namespace)";
    return id;
  }

  // S_ -> 0, S0_ -> 1, S1_ -> 2, ..., SA_ -> 11 (base 36)
  std::string substitution() {
    expect('S');
    switch (peek()) {
      case 'a': ++pos_; return "std::allocator";
      case 'b': ++pos_; return "std::basic_string";
      case 's': ++pos_; return "std::string";
      case 'i': ++pos_; return "std::istream";
      case 'o': ++pos_; return "std::ostream";
      case 'd': ++pos_; return "std::iostream";
      default: break;
    }
    std::size_t index = 0;
    if (!consume('_')) {
      std::size_t seq = 0;
      while (peek() != '_') {
        const char c = peek();
        if (std::isdigit(static_cast<unsigned char>(c))) seq = seq * 36 + std::size_t(c - '0');
        else if (c >= 'A' && c <= 'Z') seq = seq * 36 + std::size_t(c - 'A' + 10);
        else fail("bad substitution index");
        ++pos_;
      }
      expect('_');
      index = seq + 1;
    }
    if (index >= substitutions_.size())
      fail("substitution " + std::to_string(index) + " refers to nothing seen yet");
    return substitutions_[index];
  }

  std::string template_param() {
    expect('T');
    std::size_t index = 0;
    if (!consume('_')) {
      index = number() + 1;
      expect('_');
    }
    if (index >= function_template_args_.size())
      fail("template parameter " + std::to_string(index) + " is not among the function's " +
           std::to_string(function_template_args_.size()) + " template arguments");
    return function_template_args_[index];
  }

  // I <template-arg>+ E, printed as "<a, b>". The arguments go to `out`.
  std::string template_args(std::vector<std::string>* out) {
    expect('I');
    std::vector<std::string> args;
    while (!consume('E')) {
      if (done()) fail("unterminated template arguments");
      args.push_back(template_arg());
    }
    std::string text = "<";
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i) text += ", ";
      text += args[i];
    }
    text += ">";
    if (out) *out = std::move(args);
    return text;
  }

  std::string template_arg() {
    if (consume('L')) {
      if (peek() == '_' && peek(1) == 'Z') fail("function or object template arguments are not supported");
      const std::string literal_type = type();
      std::string value;
      if (consume('n')) value = "-";
      while (peek() != 'E' && !done()) value += text_[pos_++];
      expect('E');
      if (literal_type == "bool") return value == "0" ? "false" : "true";
      if (literal_type == "int") return value;
      return "(" + literal_type + ")" + value;
    }
    if (consume('J')) {  // a pack
      std::string pack;
      while (!consume('E')) {
        if (done()) fail("unterminated template argument pack");
        std::string element = template_arg();
        if (!pack.empty()) pack += ", ";
        pack += element;
      }
      return pack;
    }
    if (peek() == 'X') fail("expression template arguments are not supported");
    return type();
  }

  // One component of a name: a source name, a substitution or "std".
  struct component {
    std::string text;
    bool substituted = false;  ///< already a candidate
  };
  component unqualified() {
    if (peek() == 'S' && peek(1) == 't') {
      pos_ += 2;
      return {"std::" + source_name(), false};
    }
    if (peek() == 'S') return {substitution(), true};
    if (std::isdigit(static_cast<unsigned char>(peek()))) return {source_name(), false};
    if (peek() == 'C' || peek() == 'D') fail("constructors and destructors are not kernels");
    if (peek() == 'B') fail("ABI tags are not supported");
    if (peek() == 'Z') fail("local names are not supported");
    fail(std::string("unsupported name component '") + peek() + "'");
  }

  // <name>: unscoped ([L] source name, St name) or nested (N ... E), each
  // optionally followed by template arguments. Pushes the ABI's substitution
  // candidates: every prefix, every template name, and for a type the type.
  std::string name(std::vector<std::string>* last_template_args, bool is_type) {
    has_template_args_ = false;
    if (consume('N')) {
      while (peek() == 'r' || peek() == 'V' || peek() == 'K' || peek() == 'R' || peek() == 'O') ++pos_;
      std::string current;
      for (;;) {
        if (done()) fail("unterminated nested name");
        if (peek() == 'I') {
          if (current.empty()) fail("template arguments without a name");
          current += template_args(last_template_args);
          has_template_args_ = true;
        } else {
          if (consume('L')) {}  // internal linkage marker
          component c = unqualified();
          current = current.empty() ? c.text : current + "::" + c.text;
          has_template_args_ = false;
          if (c.substituted && peek() != 'E') continue;
        }
        if (peek() == 'E') break;
        remember(current);
      }
      expect('E');
      if (is_type) remember(current);
      return current;
    }
    consume('L');
    component c = unqualified();
    std::string current = c.text;
    if (peek() == 'I') {
      if (!c.substituted) remember(current);
      current += template_args(last_template_args);
      has_template_args_ = true;
      if (is_type) remember(current);
    } else if (is_type && !c.substituted) {
      remember(current);
    }
    return current;
  }

  const std::string& remember(std::string candidate) {
    substitutions_.push_back(std::move(candidate));
    return substitutions_.back();
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::vector<std::string> substitutions_;
  std::vector<std::string> function_template_args_;
  bool has_template_args_ = false;
};

}  // namespace

std::string signature_text(std::string_view function, const std::vector<std::string>& parameters) {
  std::string text = "void";
  if (!function.empty()) {
    text += ' ';
    text += function;
  }
  text += "(";
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    if (i) text += ", ";
    text += parameters[i];
  }
  return text + ")";
}

std::string lowered_signature::to_string() const { return signature_text(function, parameters); }

std::optional<lowered_signature> parse_lowered_name(std::string_view mangled) {
  if (!mangled.starts_with("_Z")) return std::nullopt;
  type_reader reader(mangled.substr(2));
  return reader.function();
}

std::string demangle_type(std::string_view encoding) {
  type_reader reader(encoding);
  std::string t = reader.type();
  if (!reader.done()) reader.fail("trailing characters after the type");
  return t;
}

void check_signature(std::string_view name_expression, std::string_view lowered_name,
                     const std::vector<std::string>& declared) {
  const std::optional<lowered_signature> compiled = parse_lowered_name(lowered_name);
  if (!compiled) return;  // extern "C": the name carries no types
  if (compiled->parameters == declared) return;

  std::string detail;
  if (compiled->parameters.size() != declared.size()) {
    detail = "the kernel takes " + std::to_string(compiled->parameters.size()) +
             " parameters, the declaration " + std::to_string(declared.size());
  } else {
    for (std::size_t i = 0; i < declared.size(); ++i)
      if (declared[i] != compiled->parameters[i]) {
        detail = "parameter " + std::to_string(i) + " is '" + compiled->parameters[i] +
                 "' in the kernel, '" + declared[i] + "' in the declaration";
        break;
      }
  }
  throw error("rtc: kernel '" + std::string(name_expression) +
                  "' does not match its declared signature: " + detail +
                  "\n  compiled: " + compiled->to_string() +
                  "\n  declared: " + signature_text(compiled->function, declared) +
                  "\n  (lowered name " + std::string(lowered_name) + ")",
              cudaSuccess, {}, std::string(name_expression));
}

}  // namespace cudag::rtc
