// A parameter's bytes are copied into the exec: a std::string is not
// trivially copyable.
// expect-error: static assertion failed.*cudag: graph parameters and kernel arguments must be trivially copyable
#include <string>

#include "kernel_of.hpp"
void declare(cudag::builder& b) { (void)b.param<std::string>("label"); }
