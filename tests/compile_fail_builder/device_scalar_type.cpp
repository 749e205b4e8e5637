// A device_scalar is copied to and from the device byte by byte.
// expect-error: static assertion failed.*device_scalar<T> needs a trivially copyable T
#include <string>

#include "cudag/device_scalar.hpp"
void make() { cudag::device_scalar<std::string> label; }
