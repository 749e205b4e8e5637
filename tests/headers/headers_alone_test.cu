// headers_alone_test.cpp compiled by nvcc.
#include "headers_alone_test.cpp"
