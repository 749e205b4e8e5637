// The Hana view's test (hana_view_test.cpp) compiled by nvcc: the header,
// Hana's algorithms over a graph and Hana strings as names under both front
// ends.
#include "hana_view_test.cpp"
