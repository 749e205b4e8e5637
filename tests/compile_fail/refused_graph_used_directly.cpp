// A graph refused where it is declared, used without a variable: the use
// is refused, naming the problem (a variable's uses add no second error).
// expect-error: use of deleted function .*to_spec.*cycle_through<.*"a -> b -> a"|to_spec.*cycle_through<.*"a -> b -> a".*deleted function
// expect-name: a -> b -> a
// expect-error clang: cycle_through<\{"a -> b -> \.\.\."\}>\] has been explicitly deleted
// expect-name clang: a -> b -> ...
#include "common.hpp"
void declare() {
  (void)to_spec(graph(empty<"a">(), empty<"b">(), edges<"a -> b -> a">));
}
