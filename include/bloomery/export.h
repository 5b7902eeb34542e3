// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// export.h: BLOOMERY_EXPORT, the mark of the shared library's ABI. libbloomery.so is built with
// -fvisibility=hidden (and hidden inline functions), so it exports exactly the classes and
// functions that carry the mark: the public API, and the few internal functions that a public
// header's inline code calls. tools/check_exports.py lists the exports and fails on any outside
// namespace bloomery; README's SONAME rule says when a change to them needs a new major version.
#ifndef BLOOMERY_EXPORT_H_
#define BLOOMERY_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define BLOOMERY_EXPORT __attribute__((visibility("default")))
#else
#define BLOOMERY_EXPORT
#endif

#endif  // BLOOMERY_EXPORT_H_
