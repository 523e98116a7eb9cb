/* uptx — UPTI's marker API for applications: ranges, marks, thread and category names.
 *
 * Link -luptx. With no UPTI tool present every call costs one indirect call
 * into a trivial implementation; with a tool, calls are traced as kind
 * UPTI_TRACING_KIND_MARKER_API. All functions are thread-safe.
 */
#ifndef UPTX_H
#define UPTX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UPTX_API __attribute__((visibility("default")))

/** Opens a nested range on the calling thread. Returns the new depth - 1 (0 for the outermost). */
UPTX_API int uptx_range_push(const char *message);
/** Closes the innermost range of the calling thread. Returns the remaining depth, or -1 if none was open. */
UPTX_API int uptx_range_pop(void);
/** Starts a range that may end on any thread. Returns its id (never 0). */
UPTX_API uint64_t uptx_range_start(const char *message);
/** Ends the range started with id. */
UPTX_API void uptx_range_stop(uint64_t id);
/** An instant event. */
UPTX_API void uptx_mark(const char *message);
/** Names the calling thread in traces. */
UPTX_API void uptx_name_thread(const char *name);
/** Names a category id in traces. */
UPTX_API void uptx_name_category(uint32_t category, const char *name);

#ifdef __cplusplus
}
#endif

#endif
