// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// boost/core/span.hpp for Boost 1.74, which lacks it: boost::span as C++20's std::span (what
// Boost.Bloom's array() returns). Only the Boost.Bloom peer includes this.
#ifndef BLOOMERY_BENCHMARKS_BOOST_COMPAT_SPAN_HPP_
#define BLOOMERY_BENCHMARKS_BOOST_COMPAT_SPAN_HPP_

#include <cstddef>
#include <span>

namespace boost {
template <typename T, std::size_t kExtent = std::dynamic_extent>
using span = std::span<T, kExtent>;
}  // namespace boost

#endif  // BLOOMERY_BENCHMARKS_BOOST_COMPAT_SPAN_HPP_
