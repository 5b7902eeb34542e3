// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
// The one doctest main shared by every test binary.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
