// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// export.h: BLOOMERY_EXPORT marks what libbloomery.so exports (built -fvisibility=hidden): the
// public API and what a public header's inline code calls. README.md's SONAME rule applies.
#ifndef BLOOMERY_EXPORT_H_
#define BLOOMERY_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define BLOOMERY_EXPORT __attribute__((visibility("default")))
#else
#define BLOOMERY_EXPORT
#endif

#endif  // BLOOMERY_EXPORT_H_
