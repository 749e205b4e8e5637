// The race check through the builder: a seeded-race corpus (missing edges in
// chains, fork-joins, child graphs, conditional bodies, memcpy and memset,
// views of one buffer with and without extents, narrowed and concurrent
// declarations, host and captured nodes, literal addresses, aliases through
// bindings), each graph refused naming both nodes and the memory or
// accepted; every pair listed by analyze(); races drawn in DOT; aliases
// refused at instantiation and at rebind, a refused rebind changing nothing.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/dot.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"

namespace {

void write_x(float* x, int n) { (void)x, (void)n; }
void read_x(const float* x, int n) { (void)x, (void)n; }
void copy_xy(const float* x, float* y) { (void)x, (void)y; }
void add_into(float* x) { (void)x; }
void sync_read(const float* x, int n) { (void)x, (void)n; }

float* const address_a = reinterpret_cast<float*>(0x7f5a07000000);
float* const address_b = reinterpret_cast<float*>(0x7f5a07100000);

const auto one = cudag::launch(dim3(1), dim3(32));

/// A graph, how it is made, and the race check() must refuse it for (the
/// fragments its message must hold), or none.
struct corpus_case {
  const char* name;
  std::function<cudag::graph_spec()> make;
  std::vector<std::string> race;  ///< empty: accepted
};

struct params {
  cudag::builder b{"g"};
  cudag::param_handle<float*> x = b.param<float*>("x");
  cudag::param_handle<float*> y = b.param<float*>("y");
  cudag::param_handle<int> n = b.param<int>("n");
};

/// An inner graph (a child or a body) whose nodes use the enclosing graph's x.
cudag::graph_spec inner(const std::function<void(cudag::builder&, const cudag::param_handle<float*>&)>& fill) {
  cudag::builder in("inner");
  fill(in, cudag::param_handle<float*>{"x"});
  return std::move(in).build();
}

std::vector<corpus_case> corpus() {
  std::vector<corpus_case> cases;
  const auto add = [&](const char* name, std::function<cudag::graph_spec()> make,
                       std::vector<std::string> race = {}) {
    cases.push_back({name, std::move(make), std::move(race)});
  };
  // ------------------------------------------------------------- chains --
  add("two writers, no edge", [] {
    params p;
    p.b.kernel("first", &write_x, one, p.x, p.n);
    p.b.kernel("second", &write_x, one, p.x, p.n);
    return std::move(p.b).build();
  }, {"race: 'first' writes 'x' while 'second' writes it, and no path orders them"});
  add("two writers, chained", [] {
    params p;
    auto a = p.b.kernel("first", &write_x, one, p.x, p.n);
    auto c = p.b.kernel("second", &write_x, one, p.x, p.n);
    p.b.edge(a, c);
    return std::move(p.b).build();
  });
  add("writer, reader, writer: ordered through the reader", [] {
    params p;
    auto a = p.b.kernel("w1", &write_x, one, p.x, p.n);
    auto r = p.b.kernel("r", &read_x, one, p.x, p.n);
    auto c = p.b.kernel("w2", &write_x, one, p.x, p.n);
    p.b.chain(a, r, c);
    return std::move(p.b).build();
  });
  add("a chain whose third writer is left out", [] {
    params p;
    auto a = p.b.kernel("w1", &write_x, one, p.x, p.n);
    auto c = p.b.kernel("w2", &write_x, one, p.x, p.n);
    p.b.kernel("w3", &write_x, one, p.x, p.n);
    p.b.edge(a, c);
    return std::move(p.b).build();
  }, {"'w2' writes 'x' while 'w3' writes it"});
  add("a long chain ordered only transitively", [] {
    params p;
    auto prev = p.b.kernel("k0", &write_x, one, p.x, p.n);
    for (int i = 1; i < 12; ++i) {
      auto next = p.b.empty("e" + std::to_string(i));
      auto k = p.b.kernel("k" + std::to_string(i), &write_x, one, p.x, p.n);
      p.b.chain(prev, next, k);
      prev = k;
    }
    return std::move(p.b).build();
  });
  add("readers only", [] {
    params p;
    p.b.kernel("r1", &read_x, one, p.x, p.n);
    p.b.kernel("r2", &read_x, one, p.x, p.n);
    p.b.kernel("r3", &read_x, one, p.x, p.n);
    return std::move(p.b).build();
  });
  add("a writer and a reader, no edge", [] {
    params p;
    p.b.kernel("scale", &write_x, one, p.x, p.n);
    p.b.kernel("axpy", &read_x, one, p.x, p.n);
    return std::move(p.b).build();
  }, {"race: 'scale' writes 'x' while 'axpy' reads it, and no path orders them"});
  add("different memory, no edge", [] {
    params p;
    p.b.kernel("on_x", &write_x, one, p.x, p.n);
    p.b.kernel("on_y", &write_x, one, p.y, p.n);
    return std::move(p.b).build();
  });
  add("integral arguments touch no memory", [] {
    params p;
    p.b.kernel("a", &read_x, one, p.x, p.n);
    p.b.kernel("b", &read_x, one, p.y, p.n);
    return std::move(p.b).build();
  });
  // --------------------------------------------------------- fork-joins --
  add("fork-join of readers between writers", [] {
    params p;
    auto w = p.b.kernel("produce", &write_x, one, p.x, p.n);
    auto r1 = p.b.kernel("left", &read_x, one, p.x, p.n);
    auto r2 = p.b.kernel("right", &read_x, one, p.x, p.n);
    auto w2 = p.b.kernel("overwrite", &write_x, one, p.x, p.n);
    r1.after(w);
    r2.after(w);
    w2.after(r1, r2);
    return std::move(p.b).build();
  });
  add("a join that misses one branch", [] {
    params p;
    auto w = p.b.kernel("produce", &write_x, one, p.x, p.n);
    auto r1 = p.b.kernel("left", &read_x, one, p.x, p.n);
    auto r2 = p.b.kernel("right", &read_x, one, p.x, p.n);
    auto w2 = p.b.kernel("overwrite", &write_x, one, p.x, p.n);
    r1.after(w);
    r2.after(w);
    w2.after(r1);
    return std::move(p.b).build();
  }, {"'right' reads 'x' while 'overwrite' writes it"});
  add("two writing branches of one fork", [] {
    params p;
    auto s = p.b.empty("fork");
    auto a = p.b.kernel("left", &write_x, one, p.x, p.n);
    auto c = p.b.kernel("right", &write_x, one, p.x, p.n);
    auto j = p.b.empty("join");
    a.after(s);
    c.after(s);
    j.after(a, c);
    return std::move(p.b).build();
  }, {"'left' writes 'x' while 'right' writes it"});
  // --------------------------------------------------- memcpy and memset --
  add("a copy reading what a kernel writes, no edge", [] {
    params p;
    p.b.kernel("fill", &write_x, one, p.x, p.n);
    p.b.memcpy("copy", p.y, p.x, 4096);
    return std::move(p.b).build();
  }, {"'fill' writes bytes [0, 4096) of 'x' while 'copy' reads it"});
  add("a copy writing what a kernel reads, no edge", [] {
    params p;
    p.b.memcpy("copy", p.y, p.x, 4096);
    p.b.kernel("use", &read_x, one, p.y, p.n);
    return std::move(p.b).build();
  }, {"'copy' writes bytes [0, 4096) of 'y' while 'use' reads it"});
  add("a copy and a kernel in order", [] {
    params p;
    auto f = p.b.kernel("fill", &write_x, one, p.x, p.n);
    auto c = p.b.memcpy("copy", p.y, p.x, 4096);
    p.b.edge(f, c);
    return std::move(p.b).build();
  });
  add("a memset and a reader, no edge", [] {
    params p;
    p.b.memset("clear", p.x, 0u, 1024);
    p.b.kernel("use", &read_x, one, p.x, p.n);
    return std::move(p.b).build();
  }, {"'clear' writes bytes [0, 4096) of 'x' while 'use' reads it"});
  add("a memset before its reader", [] {
    params p;
    auto c = p.b.memset("clear", p.x, 0u, 1024);
    auto u = p.b.kernel("use", &read_x, one, p.x, p.n);
    p.b.edge(c, u);
    return std::move(p.b).build();
  });
  // ------------------------------------------------- views of one buffer --
  add("memsets of the two halves of a buffer", [] {
    cudag::builder b("g");
    auto buf = b.alloc<float>("tmp", 2048);
    auto lo = b.memset("low", buf.buffer, 0u, 1024);
    auto hi = b.memset("high", buf.buffer + 1024, 0u, 1024);
    auto f = b.free("release", buf.buffer);
    lo.after(buf.node);
    hi.after(buf.node);
    f.after(lo, hi);
    return std::move(b).build();
  });
  add("memsets that share one element", [] {
    cudag::builder b("g");
    auto buf = b.alloc<float>("tmp", 2048);
    auto lo = b.memset("low", buf.buffer, 0u, 1025);
    auto hi = b.memset("high", buf.buffer + 1024, 0u, 1024);
    lo.after(buf.node);
    hi.after(buf.node);
    return std::move(b).build();
  }, {"'low' writes bytes [4096, 4100) of buffer 'tmp' while 'high' writes it"});
  add("kernels on halves with declared extents", [] {
    cudag::builder b("g");
    auto n = b.param<int>("n");
    auto buf = b.alloc<float>("tmp", 2048);
    auto lo = b.kernel("low", &write_x, one, buf.buffer, n).access(0, cudag::access_mode::read_write, 4096);
    auto hi = b.kernel("high", &write_x, one, buf.buffer + 1024, n).access(0, cudag::access_mode::read_write, 4096);
    lo.after(buf.node);
    hi.after(buf.node);
    return std::move(b).build();
  });
  add("kernels on halves without extents", [] {
    cudag::builder b("g");
    auto n = b.param<int>("n");
    auto buf = b.alloc<float>("tmp", 2048);
    auto lo = b.kernel("low", &write_x, one, buf.buffer, n);
    auto hi = b.kernel("high", &write_x, one, buf.buffer + 1024, n);
    lo.after(buf.node);
    hi.after(buf.node);
    return std::move(b).build();
  }, {"'low' writes bytes from 4096 on of buffer 'tmp' while 'high' writes it"});
  // -------------------------------------------------------- declarations --
  add("a T* declared read beside a reader", [] {
    params p;
    p.b.kernel("peek", &write_x, one, p.x, p.n).access(0, cudag::access_mode::read);
    p.b.kernel("look", &read_x, one, p.x, p.n);
    return std::move(p.b).build();
  });
  add("a T* declared read beside a writer", [] {
    params p;
    p.b.kernel("peek", &write_x, one, p.x, p.n).access(0, cudag::access_mode::read);
    p.b.kernel("poke", &write_x, one, p.x, p.n);
    return std::move(p.b).build();
  }, {"'peek' reads 'x' while 'poke' writes it"});
  add("concurrent updates declared on both", [] {
    params p;
    p.b.kernel("add1", &add_into, one, p.x).access(0, cudag::access_mode::concurrent);
    p.b.kernel("add2", &add_into, one, p.x).access(0, cudag::access_mode::concurrent);
    return std::move(p.b).build();
  });
  add("a concurrent update beside a reader", [] {
    params p;
    p.b.kernel("add1", &add_into, one, p.x).access(0, cudag::access_mode::concurrent);
    p.b.kernel("look", &read_x, one, p.x, p.n);
    return std::move(p.b).build();
  }, {"'add1' updates concurrently 'x' while 'look' reads it"});
  add("a concurrent update beside an undeclared writer", [] {
    params p;
    p.b.kernel("add1", &add_into, one, p.x).access(0, cudag::access_mode::concurrent);
    p.b.kernel("add2", &add_into, one, p.x);
    return std::move(p.b).build();
  }, {"'add1' updates concurrently 'x' while 'add2' writes it"});
  add("concurrent updates, then a reader after both", [] {
    params p;
    auto a = p.b.kernel("add1", &add_into, one, p.x).access(0, cudag::access_mode::concurrent);
    auto c = p.b.kernel("add2", &add_into, one, p.x).access(0, cudag::access_mode::concurrent);
    p.b.kernel("total", &read_x, one, p.x, p.n).after(a, c);
    return std::move(p.b).build();
  });
  // -------------------------------------------------- host and captured --
  add("a host node given a pointer beside a reader", [] {
    params p;
    p.b.host("report", [](float* x) { (void)x; }, p.x);
    p.b.kernel("look", &read_x, one, p.x, p.n);
    return std::move(p.b).build();
  }, {"'report' writes 'x' while 'look' reads it"});
  add("a host node declared read beside a reader", [] {
    params p;
    p.b.host("report", [](float* x) { (void)x; }, p.x).access(0, cudag::access_mode::read);
    p.b.kernel("look", &read_x, one, p.x, p.n);
    return std::move(p.b).build();
  });
  add("a captured node beside a reader", [] {
    params p;
    p.b.captured("library", "a library call", [](cudaStream_t, float* x) { (void)x; }, p.x);
    p.b.kernel("look", &read_x, one, p.x, p.n);
    return std::move(p.b).build();
  }, {"'library' writes 'x' while 'look' reads it"});
  // ------------------------------------------------ child graphs, bodies --
  add("a child graph's writer beside a top-level reader", [] {
    params p;
    p.b.child("stage", inner([](cudag::builder& in, const auto& x) {
      in.kernel("produce", &write_x, one, x, cudag::param_handle<int>{"n"});
    }));
    p.b.kernel("consume", &read_x, one, p.x, p.n);
    return std::move(p.b).build();
  }, {"'stage/produce' (through its enclosing node 'stage') writes 'x' while 'consume' reads it"});
  add("a child graph ordered before its reader", [] {
    params p;
    auto s = p.b.child("stage", inner([](cudag::builder& in, const auto& x) {
      in.kernel("produce", &write_x, one, x, cudag::param_handle<int>{"n"});
    }));
    p.b.kernel("consume", &read_x, one, p.x, p.n).after(s);
    return std::move(p.b).build();
  });
  add("two writers inside one child graph", [] {
    params p;
    p.b.child("stage", inner([](cudag::builder& in, const auto& x) {
      in.kernel("a", &write_x, one, x, cudag::param_handle<int>{"n"});
      in.kernel("b", &write_x, one, x, cudag::param_handle<int>{"n"});
    }));
    return std::move(p.b).build();
  }, {"'stage/a' writes 'x' while 'stage/b' writes it, and no path orders them in the child graph of 'stage'"});
  add("an if body's writer beside a top-level writer", [] {
    params p;
    auto c = p.b.condition("c");
    p.b.if_then("maybe", c, inner([](cudag::builder& in, const auto& x) {
      in.kernel("produce", &write_x, one, x, cudag::param_handle<int>{"n"});
    }));
    p.b.kernel("other", &write_x, one, p.x, p.n);
    return std::move(p.b).build();
  }, {"'maybe/produce' (through its enclosing node 'maybe') writes 'x' while 'other' writes it"});
  add("the two bodies of an if-else write the same memory", [] {
    params p;
    auto c = p.b.condition("c");
    const auto writer = [](cudag::builder& in, const auto& x) {
      in.kernel("produce", &write_x, one, x, cudag::param_handle<int>{"n"});
    };
    p.b.if_else("branch", c, inner(writer), inner(writer));
    return std::move(p.b).build();
  });
  add("two writers in a while body", [] {
    params p;
    auto c = p.b.condition("c");
    p.b.while_loop("loop", c, inner([](cudag::builder& in, const auto& x) {
      in.kernel("step", &write_x, one, x, cudag::param_handle<int>{"n"});
      in.kernel("again", &write_x, one, x, cudag::param_handle<int>{"n"});
    }));
    return std::move(p.b).build();
  }, {"'loop/step' writes 'x' while 'loop/again' writes it, and no path orders them in the body of 'loop'"});
  // ------------------------------------------------ literals and edges --
  add("one literal address written by two nodes", [] {
    params p;
    p.b.kernel("a", &write_x, one, address_a, p.n);
    p.b.kernel("b", &write_x, one, address_a, p.n);
    return std::move(p.b).build();
  }, {"'a' writes the memory at 0x7f5a07000000 while 'b' writes it"});
  add("two literal addresses", [] {
    params p;
    p.b.kernel("a", &write_x, one, address_a, p.n);
    p.b.kernel("b", &write_x, one, address_b, p.n);
    return std::move(p.b).build();
  });
  add("a programmatic edge orders what it joins", [] {
    params p;
    auto w = p.b.kernel("produce", &write_x, one, p.x, p.n);
    auto r = p.b.kernel("consume", cudag::synchronizes_grid_dependencies(cudag::kernel_of(&sync_read, "sync_read")),
                        one, p.x, p.n);
    p.b.edge(w, r, cudag::edge_kind::programmatic);
    return std::move(p.b).build();
  });
  add("a copy between two kernels", [] {
    params p;
    auto a = p.b.kernel("make", &copy_xy, one, p.y, p.x);
    auto c = p.b.memcpy("back", p.y, p.x, 64);
    p.b.edge(a, c);
    return std::move(p.b).build();
  });
  return cases;
}

TEST(Races, TheCorpusIsRefusedOrAcceptedAsItShouldBe) {
  const std::vector<corpus_case> cases = corpus();
  ASSERT_GE(cases.size(), 30u);
  std::size_t races = 0;
  for (const corpus_case& c : cases) {
    SCOPED_TRACE(c.name);
    const cudag::graph_spec spec = c.make();
    if (c.race.empty()) {
      EXPECT_NO_THROW(cudag::check(spec));
      EXPECT_TRUE(cudag::analyze(spec).races.empty());
      continue;
    }
    ++races;
    try {
      cudag::check(spec);
      ADD_FAILURE() << "accepted";
    } catch (const cudag::check_error& e) {
      const std::string what = e.what();
      for (const std::string& part : c.race) EXPECT_NE(what.find(part), std::string::npos) << what;
      ASSERT_EQ(e.nodes().size(), 2u) << what;
    }
    // The same graph resolved (as a builder runs it) is refused alike.
    EXPECT_THROW(cudag::check(cudag::resolve(spec)), cudag::check_error);
    EXPECT_FALSE(cudag::analyze(spec).races.empty());
  }
  EXPECT_GE(races, 15u);
}

TEST(Races, AnalyzeListsEveryPairOnce) {
  params p;
  p.b.kernel("a", &write_x, one, p.x, p.n);
  p.b.kernel("b", &write_x, one, p.x, p.n);
  auto r = p.b.kernel("c", &read_x, one, p.x, p.n);
  p.b.kernel("d", &read_x, one, p.x, p.n).after(r);
  const auto found = cudag::analyze(std::move(p.b).build()).races;
  std::vector<std::string> pairs;
  for (const cudag::race_report& r : found) pairs.push_back(r.first + "-" + r.second + " " + r.memory);
  // a-b, a-c, a-d, b-c, b-d; c-d both read.
  EXPECT_EQ(pairs, (std::vector<std::string>{"a-b 'x'", "a-c 'x'", "b-c 'x'", "a-d 'x'", "b-d 'x'"}));
  EXPECT_EQ(found[1].first_access, cudag::access_mode::read_write);
  EXPECT_EQ(found[1].second_access, cudag::access_mode::read);
}

TEST(Races, DotDrawsARaceAsARedDashedLineAndShowsDeclarations) {
  params p;
  p.b.kernel("scale", &write_x, one, p.x, p.n);
  p.b.kernel("axpy", &read_x, one, p.x, p.n);
  p.b.kernel("peek", &write_x, one, p.y, p.n).access(0, cudag::access_mode::read);
  const std::string dot = cudag::to_dot(std::move(p.b).build());
  EXPECT_NE(dot.find("n0 -> n1 [dir=none, style=dashed, color=red"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"race: 'x'\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("access argument 0 read"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("n1 -> n2 [dir=none"), std::string::npos) << dot;
}

TEST(Races, DeclarationsAreRefusedWhereTheyCannotApply) {
  params p;
  auto k = p.b.kernel("k", &write_x, one, p.x, p.n);
  try {
    k.access(1, cudag::access_mode::read);
    ADD_FAILURE();
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel node 'k' declares an access through argument 1, a int, "
                                         "which points at no memory"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(k.access(2, cudag::access_mode::read), cudag::error);
  auto m = p.b.memset("clear", p.x, 0u, 16);
  EXPECT_THROW(m.access(0, cudag::access_mode::read), cudag::error);
  // A spec written by hand: check() refuses the same.
  cudag::graph_spec spec = std::move(p.b).build();
  std::get<cudag::kernel_node>(spec.nodes[0].params).accesses.push_back({5, cudag::access_mode::read});
  try {
    cudag::check(spec);
    ADD_FAILURE();
  } catch (const cudag::check_error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel node 'k' declares an access through argument 5, but it "
                                         "takes 2 arguments"),
              std::string::npos)
        << e.what();
  }
}

TEST(Races, CudaHandlesAreNoMemory) {
  // Two host nodes given one event (a pointer to a type nobody reads) do not race.
  cudag::builder b("g");
  auto ev = b.param<cudaEvent_t>("ev");
  auto st = b.param<cudaStream_t>("st");
  b.host("query_a", [](cudaEvent_t e, cudaStream_t s) { (void)e, (void)s; }, ev, st);
  b.host("query_b", [](cudaEvent_t e, cudaStream_t s) { (void)e, (void)s; }, ev, st);
  EXPECT_NO_THROW(cudag::check(b.spec()));
}

TEST(Races, ANodeHoldingAReaderAndAWriterIsNamedByItsWriter) {
  cudag::builder in("inner");
  const cudag::param_handle<float*> x{"x"};
  const cudag::param_handle<int> n{"n"};
  auto r = in.kernel("reader", &read_x, one, x, n);
  auto w = in.memset("writer", x, 0u, 16);
  in.edge(r, w);
  params p;
  p.b.child("holder", std::move(in).build());
  p.b.kernel("other", &read_x, one, p.x, p.n);
  try {
    cudag::check(p.b.spec());
    ADD_FAILURE();
  } catch (const cudag::check_error& e) {
    EXPECT_NE(std::string(e.what()).find("race: 'holder/writer' (through its enclosing node 'holder') writes"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.nodes(), (std::vector<std::string>{"holder/writer", "other"}));
  }
}

/// x written by one node and y read by another, with no edge: a race only
/// when x and y are bound to one address.
cudag::graph_spec writer_and_reader() {
  params p;
  p.b.kernel("write", &write_x, one, p.x, p.n);
  p.b.kernel("read", &read_x, one, p.y, p.n);
  return std::move(p.b).build();
}

TEST(Races, TwoParametersBoundToOneAddressAreOneMemory) {
  const cudag::graph_spec spec = writer_and_reader();
  EXPECT_NO_THROW(cudag::check(spec));
  const cudag::binding apart[] = {cudag::bind("x", address_a), cudag::bind("y", address_b),
                                  cudag::bind("n", 1)};
  EXPECT_NO_THROW(cudag::check(spec, apart));
  const cudag::binding alias[] = {cudag::bind("x", address_a), cudag::bind("y", address_a),
                                  cudag::bind("n", 1)};
  try {
    cudag::check(spec, alias);
    ADD_FAILURE();
  } catch (const cudag::check_error& e) {
    EXPECT_NE(std::string(e.what()).find("race: 'write' writes 'x' and 'y' (bound to the same address, "
                                         "0x7f5a07000000) while 'read' reads it"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(cudag::analyze(spec, {.bindings = alias}).races.size(), 1u);
  // Null pointers alias nothing.
  const cudag::binding nulls[] = {cudag::bind("x", static_cast<float*>(nullptr)),
                                  cudag::bind("y", static_cast<float*>(nullptr)), cudag::bind("n", 1)};
  EXPECT_NO_THROW(cudag::check(spec, nulls));
}

TEST(Races, AnAliasIsRefusedAtInstantiationAndAtRebindChangingNothing) {
  cudag::native::recorder rec;
  rec.name_kernel(&read_x, "read_x");
  const cudag::graph_spec spec = writer_and_reader();
  const cudag::binding alias[] = {cudag::bind("x", address_a), cudag::bind("y", address_a),
                                  cudag::bind("n", 1)};
  EXPECT_THROW((void)cudag::instantiate(spec, alias), cudag::check_error);

  const cudag::binding apart[] = {cudag::bind("x", address_a), cudag::bind("y", address_b),
                                  cudag::bind("n", 1)};
  cudag::exec e = cudag::instantiate(spec, apart);
  rec.clear();
  try {
    e.rebind(cudag::bind("y", address_a));
    ADD_FAILURE();
  } catch (const cudag::check_error& err) {
    EXPECT_NE(std::string(err.what()).find("'x' and 'y' (bound to the same address"), std::string::npos)
        << err.what();
  }
  EXPECT_TRUE(rec.calls().empty());
  // Nothing changed: the next rebind of y sends y's new value alone.
  e.rebind(cudag::bind("y", address_b + 64));
  ASSERT_EQ(rec.calls().size(), 1u);
  EXPECT_NE(rec.calls()[0].find("exec_kernel_node_set_params x1 n2 read_x"), std::string::npos)
      << rec.calls()[0];
  // Two values at once that alias only together are refused too.
  rec.clear();
  const cudag::binding both[] = {cudag::bind("x", address_b), cudag::bind("y", address_b)};
  EXPECT_THROW(e.rebind(both), cudag::check_error);
  EXPECT_TRUE(rec.calls().empty());
  // An alias that makes no race (both only read) is accepted.
  params p;
  p.b.kernel("r1", &read_x, one, p.x, p.n);
  p.b.kernel("r2", &read_x, one, p.y, p.n);
  cudag::exec readers = cudag::instantiate(std::move(p.b).build(), apart);
  EXPECT_NO_THROW(readers.rebind(cudag::bind("y", address_a)));
}

}  // namespace
