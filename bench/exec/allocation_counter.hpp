#pragma once
/// Heap allocations made so far by this program (global operator new is
/// replaced in allocation_counter.cpp, host code compiled by the C++ compiler).
long heap_allocations() noexcept;
