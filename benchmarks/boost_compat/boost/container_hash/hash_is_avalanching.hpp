// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// boost::hash_is_avalanching for Boost 1.81 (Debian 12), which Boost.Bloom needs and 1.81 lacks.
// Only the benchmark's Boost.Bloom peer includes this (-Dpeer_boost_bloom). The contract is
// Boost's: a hash is avalanching when it declares a member type `is_avalanching`; otherwise the
// filter mixes the hash once more itself (which boost::hash of an integer, the identity, needs).
#ifndef BLOOMERY_BENCHMARKS_BOOST_COMPAT_HASH_IS_AVALANCHING_HPP_
#define BLOOMERY_BENCHMARKS_BOOST_COMPAT_HASH_IS_AVALANCHING_HPP_

#include <type_traits>

namespace boost {

template <typename Hash, typename = void>
struct hash_is_avalanching : std::false_type {};

template <typename Hash>
struct hash_is_avalanching<Hash, std::void_t<typename Hash::is_avalanching>>
    : std::bool_constant<static_cast<bool>(Hash::is_avalanching::value)> {};

}  // namespace boost

#endif  // BLOOMERY_BENCHMARKS_BOOST_COMPAT_HASH_IS_AVALANCHING_HPP_
