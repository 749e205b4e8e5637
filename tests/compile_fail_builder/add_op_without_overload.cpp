// An op type with no cudag_add_op next to it.
// expect-error: static assertion failed.*cudag::add_op\(b, name, op, args\.\.\.\) needs a function
#include "cudag/op.hpp"
namespace mylib {
struct fft {
  int n;
};
}  // namespace mylib
void declare(cudag::builder& b) { (void)cudag::add_op(b, "transform", mylib::fft{64}); }
