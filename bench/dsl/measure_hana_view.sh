#!/bin/sh
# What cudag/dsl/hana.hpp costs a DSL translation unit: compile time and
# peak memory of one generated graph (bench/dsl/gen_graph.py, dag-table,
# full: declared, instantiated, made a spec) compiled three ways:
#   plain     as generated: cudag/dsl.hpp only
#   included  cudag/dsl/hana.hpp included too, nothing of it used
#   used      included, and the graph's nodes, parameters, buffers and order
#             viewed in static_asserts and walked by hana::for_each (with
#             the Hana algorithm headers these use)
# usage: measure_hana_view.sh SOURCE_ROOT "SIZES" "COMPILERS" REPEATS
#   e.g. measure_hana_view.sh . "8 128" "g++ nvcc" 3
# Prints one markdown row per run:
#   compiler | nodes | variant | wall (m:ss) | user+sys s | peak MiB
set -eu
root=$1; sizes=$2; compilers=$3; repeats=$4
. "$(dirname "$0")/compile_timing.sh"
cuda=$(sh "$root/scripts/cuda-root.sh")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for compiler in $compilers; do
  for nodes in $sizes; do
    for variant in plain included used; do
      if [ "$compiler" = nvcc ]; then
        src="$work/graph.cu"
        set -- nvcc -std=c++20 -O2 -gencode=arch=compute_90,code=sm_90 --expt-relaxed-constexpr \
          -I"$root/include" -I"$root/dsl" -c "$src" -o "$work/graph.o"
      else
        src="$work/graph.cpp"
        set -- g++ -std=c++20 -O2 -I"$root/include" -I"$root/dsl" -I"$cuda/include" -c "$src" -o "$work/graph.o"
      fi
      python3 "$root/bench/dsl/gen_graph.py" dag-table "$nodes" "$work/generated" 7 full
      case $variant in
        plain) cp "$work/generated" "$src" ;;
        included)
          { echo '#include "cudag/dsl/hana.hpp"'; cat "$work/generated"; } > "$src" ;;
        used)
          { echo '#include "cudag/dsl/hana.hpp"'; cat "$work/generated"; cat <<EOF
#include <boost/hana/at.hpp>
#include <boost/hana/count_if.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/is_empty.hpp>
#include <boost/hana/size.hpp>
#include <boost/hana/transform.hpp>
namespace hana = boost::hana;
namespace hv = cudag::dsl::hana_view;
static_assert(hana::size(hv::nodes(g)) == hana::size_c<$nodes>);
static_assert(hana::at_c<0>(hv::nodes(g)).name == BOOST_HANA_STRING("n0"));
static_assert(hana::count_if(hv::nodes(g), [](auto v) {
                return v.kind == hana::integral_c<cudag::node_kind, cudag::node_kind::kernel>;
              }) == hana::size_c<$nodes>);
static_assert(hana::transform(hv::params(g), [](auto p) { return p.type; }) ==
              hana::tuple_t<int, float*, float*>);
static_assert(hana::size(hv::order(g)) == hana::size_c<$nodes>);
static_assert(hana::is_empty(hv::buffers(g)));
std::size_t dependency_count() {
  std::size_t total = 0;
  hana::for_each(hv::nodes(g), [&](auto v) { total += hana::size(v.depends_on); });
  return total;
}
EOF
          } > "$src" ;;
      esac
      run=1
      while [ "$run" -le "$repeats" ]; do
        time_compile "$@"
        echo "| $compiler | $nodes | $variant | $seconds | $cpu | $mib |"
        run=$((run + 1))
      done
    done
  done
done
