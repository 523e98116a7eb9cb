/* SPDX-License-Identifier: MIT */
/* UPTI — the whole public API for tools. */
#ifndef UPTI_H
#define UPTI_H

#include <upti/agent.h>
#include <upti/buffer.h>
#include <upti/buffer_tracing.h>
#include <upti/callback.h>
#include <upti/callback_tracing.h>
#include <upti/context.h>
#include <upti/defines.h>
#include <upti/external_correlation.h>
#include <upti/intercept_table.h>
#include <upti/log.h>
#include <upti/marker.h>
#include <upti/names.h>
#include <upti/registration.h>
#include <upti/status.h>
#include <upti/types.h>

#endif
