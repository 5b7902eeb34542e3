// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// boost/core/bit.hpp for Boost 1.74, which lacks it: the two functions Boost.Bloom calls, as
// C++20's <bit> (the benchmarks are C++20). Only the Boost.Bloom peer includes this.
#ifndef BLOOMERY_BENCHMARKS_BOOST_COMPAT_BIT_HPP_
#define BLOOMERY_BENCHMARKS_BOOST_COMPAT_BIT_HPP_

#include <bit>

namespace boost::core {
using std::bit_width;
using std::countr_zero;
}  // namespace boost::core

#endif  // BLOOMERY_BENCHMARKS_BOOST_COMPAT_BIT_HPP_
