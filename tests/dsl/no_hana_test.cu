// no_hana_test.cpp compiled by nvcc: no Boost.Hana header under nvcc either.
#include "no_hana_test.cpp"
