// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// boost/core/allocator_traits.hpp for Boost 1.74 (this VM's Debian packages), which Boost.Bloom
// includes and 1.74 lacks: the allocator_* names it uses are all in 1.74's allocator_access.hpp.
// Only the benchmark's Boost.Bloom peer includes this (-Dpeer_boost_bloom).
#ifndef BLOOMERY_BENCHMARKS_BOOST_COMPAT_ALLOCATOR_TRAITS_HPP_
#define BLOOMERY_BENCHMARKS_BOOST_COMPAT_ALLOCATOR_TRAITS_HPP_

#include <boost/core/allocator_access.hpp>

#endif  // BLOOMERY_BENCHMARKS_BOOST_COMPAT_ALLOCATOR_TRAITS_HPP_
