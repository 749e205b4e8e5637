#pragma once
// std::function and the smart pointers, for cudag's public headers, without
// the rest of <functional> and <memory>. Every translation unit that holds a
// DSL graph parses these headers; under libstdc++ (GCC 12, C++20) the full
// <functional> brings the searchers, hash tables and algorithms, and <memory>
// the ranges algorithms, about 17 MiB of compiler memory and a tenth of the
// headers' parse time between them. libstdc++ declares each component in a
// header of its own, which is used where it exists; any other standard
// library gets the standard headers.
#include <cstddef>  // defines the standard library's identification macros

#if defined(__GLIBCXX__) && __has_include(<bits/std_function.h>) && \
    __has_include(<bits/shared_ptr.h>) && __has_include(<bits/unique_ptr.h>)
#include <bits/shared_ptr.h>   // std::shared_ptr, std::make_shared
#include <bits/std_function.h> // std::function
#include <bits/unique_ptr.h>   // std::unique_ptr, std::make_unique
#else
#include <functional>
#include <memory>
#endif
