#pragma once
// The heterogeneous values of one node (a kernel's or host node's arguments
// and their resolved values, a child graph's or conditional's bodies) are
// Boost.Hana basic_tuples. They hold a handful of elements, where Hana's
// plumbing costs little (its headers add about 0.1 s). Graph-level storage,
// with one element per item and hundreds of items, is a chunked_tuple:
// measured, it is what keeps large graphs within compile-time goals.
#include <boost/hana/at.hpp>
#include <boost/hana/basic_tuple.hpp>

namespace cudag::dsl {

namespace hana = boost::hana;

template <class... T>
using node_tuple = hana::basic_tuple<T...>;

}  // namespace cudag::dsl
