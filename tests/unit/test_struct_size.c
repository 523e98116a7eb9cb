/* SPDX-License-Identifier: MIT */
/* Structs that grow: every public struct UPTI reads is read by its size
 * (src/common/struct_size.h). A smaller one gets defaults for the fields it
 * does not have, a larger one is accepted when the fields UPTI does not know
 * are 0 and refused with UPTI_STATUS_ERROR_INCOMPATIBLE_ABI otherwise.
 *
 *   struct_size.copy            the rule itself
 *   struct_size.buffer_options  upti_create_buffer_with_options, the old
 *                               upti_create_buffer, upti_runtime_add_agent
 *   struct_size.result_small    a configure result that stops before
 *                               tool_data: initialize gets NULL
 *   struct_size.result_unknown  one that sets a field UPTI does not know:
 *                               the tool is skipped, one stderr line
 */
#include <upti/runtime.h>
#include <upti/compat.h> /* upti_create_buffer, UPTI 0.1's positional form */
#include <upti/runtime_callback.h>
#include <upti/upti.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "struct_size.h"
#include "capture_stderr.h"
#include "check.h"
#include "test_tool.h"
#include "unit_tests.h"

struct small { size_t size; int a; };
struct large { size_t size; int a; int b; uint64_t c; };

static void test_copy(void)
{
    struct large in = {sizeof in, 1, 2, 3};
    struct small out;
    /* larger, unknown fields set: refused */
    CHECK_STATUS(upti_struct_copy(&out, sizeof out, &in), UPTI_STATUS_ERROR_INCOMPATIBLE_ABI);
    /* larger, unknown fields 0: the known part */
    in.b = 0;
    in.c = 0;
    CHECK_STATUS(upti_struct_copy(&out, sizeof out, &in), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(out.a, 1);
    /* smaller: the rest reads 0 even where the caller's memory is not */
    struct large big;
    memset(&big, 0xab, sizeof big);
    struct small caller = {sizeof caller, 7};
    memcpy(&big, &caller, sizeof caller);
    big.size = offsetof(struct large, b);
    CHECK_STATUS(upti_struct_copy(&in, sizeof in, &big), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(in.a, 7);
    CHECK_EQ_U64(in.b, 0);
    CHECK_EQ_U64(in.c, 0);
    /* no room for the size member itself, or no struct */
    big.size = sizeof(size_t) - 1;
    CHECK_STATUS(upti_struct_copy(&in, sizeof in, &big), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_struct_copy(&in, sizeof in, NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
}

/* ---- buffer options, through a tool ---- */

static upti_context_id_t g_ctx;
static int g_records;
static void *g_data_seen = (void *)1;

static void on_buffer(upti_context_id_t c, upti_buffer_id_t b, upti_record_header_t **headers,
                      size_t n, void *data, uint64_t drops)
{
    (void)c, (void)b, (void)headers, (void)drops;
    g_records += (int)n;
    if (n > 0)
        g_data_seen = data;
}

/* An options struct as a newer header would declare it: one more field. */
typedef struct {
    upti_buffer_options_t known;
    uint64_t future;
} newer_options_t;

static upti_buffer_id_t g_small_buffer;

static int init_buffer_options(upti_client_finalize_t fin, void *tool_data)
{
    (void)fin, (void)tool_data;
    CHECK_STATUS(upti_create_context(&g_ctx), UPTI_STATUS_SUCCESS);
    upti_buffer_id_t id;
    CHECK_STATUS(upti_create_buffer_with_options(g_ctx, NULL, &id),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    upti_buffer_options_t o = UPTI_OPTIONS(upti_buffer_options_t, .callback = on_buffer,
                                           .callback_data = &g_ctx);
    CHECK_STATUS(upti_create_buffer_with_options(g_ctx, &o, NULL), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    /* only the size member: callback defaults to NULL, which is required */
    o.size = sizeof(size_t);
    CHECK_STATUS(upti_create_buffer_with_options(g_ctx, &o, &id), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    o.size = 3;
    CHECK_STATUS(upti_create_buffer_with_options(g_ctx, &o, &id), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    /* an older caller without callback_data: it reads NULL, not &g_ctx */
    o.size = offsetof(upti_buffer_options_t, callback_data);
    CHECK_STATUS(upti_create_buffer_with_options(g_ctx, &o, &g_small_buffer), UPTI_STATUS_SUCCESS);
    /* a newer caller that leaves the field this UPTI does not know at 0 */
    newer_options_t n = {.known = o, .future = 0};
    n.known.size = sizeof n;
    CHECK_STATUS(upti_create_buffer_with_options(g_ctx, &n.known, &id), UPTI_STATUS_SUCCESS);
    /* ...and one that sets it */
    n.future = 1;
    CHECK_STATUS(upti_create_buffer_with_options(g_ctx, &n.known, &id),
                 UPTI_STATUS_ERROR_INCOMPATIBLE_ABI);
    /* out of range policy */
    o.size = sizeof o;
    o.policy = UPTI_BUFFER_POLICY_LAST;
    CHECK_STATUS(upti_create_buffer_with_options(g_ctx, &o, &id), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    /* the positional form keeps its rules: no default policy */
    CHECK_STATUS(upti_create_buffer(g_ctx, 4096, 0, UPTI_BUFFER_POLICY_NONE, on_buffer, NULL, &id),
                 UPTI_STATUS_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(upti_create_buffer(g_ctx, 4096, 0, UPTI_BUFFER_POLICY_LOSSLESS, on_buffer, NULL, &id),
                 UPTI_STATUS_SUCCESS);
    return 0;
}

TEST_CONFIGURE(configure_buffer_options, init_buffer_options, NULL)

static void test_buffer_options(void)
{
    CHECK_STATUS(upti_force_configure(configure_buffer_options), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_write_buffer_record(g_small_buffer, 1, "x", 1), UPTI_STATUS_SUCCESS);
    CHECK_STATUS(upti_flush_buffer(g_small_buffer), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(g_records, 1);
    CHECK(g_data_seen == NULL);

    /* agents: an older integration's struct (up to name) and a newer one's */
    struct { upti_agent_t known; uint64_t future; } agent;
    memset(&agent, 0x5a, sizeof agent); /* what lies past the claimed size is not read */
    agent.known.size = offsetof(upti_agent_t, vendor);
    agent.known.type = UPTI_AGENT_TYPE_GPU;
    agent.known.runtime = "struct_size";
    agent.known.name = "small";
    upti_agent_id_t id = {0};
    CHECK_STATUS(upti_runtime_add_agent(&agent.known, &id), UPTI_STATUS_SUCCESS);
    CHECK(id.handle != 0);
    memset(&agent, 0, sizeof agent);
    agent.known.size = sizeof agent;
    agent.known.runtime = "struct_size";
    agent.future = 1;
    CHECK_STATUS(upti_runtime_add_agent(&agent.known, &id), UPTI_STATUS_ERROR_INCOMPATIBLE_ABI);
    /* an older build's agent of today's size: what is reserved0 today was its tail padding */
    upti_agent_t padded;
    memset(&padded, 0x5a, sizeof padded);
    padded.size = sizeof padded;
    padded.type = UPTI_AGENT_TYPE_GPU;
    padded.runtime = "struct_size_padded";
    padded.name = padded.vendor = padded.driver_version = "padded";
    CHECK_STATUS(upti_runtime_add_agent(&padded, &id), UPTI_STATUS_SUCCESS);
    /* a provider without room for its callback */
    upti_runtime_subscriber_provider_t p = {offsetof(upti_runtime_subscriber_provider_t, domains_changed),
                                            "small", NULL, NULL};
    CHECK_STATUS(upti_runtime_register_subscriber_provider(&p), UPTI_STATUS_ERROR_INVALID_ARGUMENT);
}

static int g_agents_small;
static upti_status_t count_small(const upti_agent_t **agents, size_t n, void *data)
{
    (void)data;
    for (size_t i = 0; i < n; i++)
        if (strcmp(agents[i]->runtime, "struct_size") == 0) {
            g_agents_small++;
            CHECK(strcmp(agents[i]->name, "small") == 0);
            CHECK(strcmp(agents[i]->vendor, "") == 0); /* default, not 0x5a... */
            CHECK_EQ_U64(agents[i]->compute_units, 0);
            CHECK_EQ_U64(agents[i]->size, sizeof(upti_agent_t));
        } else if (strcmp(agents[i]->runtime, "struct_size_padded") == 0) {
            g_agents_small++;
            /* what an older build's tail padding held (0x5a... here) is handed out as 0 */
            CHECK_EQ_U64(agents[i]->reserved0, 0);
        }
    return UPTI_STATUS_SUCCESS;
}

/* ---- configure results ---- */

static int g_initialized;
static void *g_tool_data_seen = (void *)1;

static int init_record(upti_client_finalize_t fin, void *tool_data)
{
    (void)fin;
    g_initialized++;
    g_tool_data_seen = tool_data;
    return 0;
}

typedef struct {
    upti_tool_configure_result_t known;
    uint64_t future;
} newer_result_t;
static newer_result_t g_result;

static upti_tool_configure_result_t *configure_result(uint32_t v, const char *rv, uint32_t prio,
                                                      upti_client_id_t *id)
{
    (void)v, (void)rv, (void)prio, (void)id;
    return &g_result.known;
}

static void test_buffer_options_agents(void)
{
    test_buffer_options();
    CHECK_STATUS(upti_query_available_agents(count_small, NULL), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(g_agents_small, 2);
}

/* An older tool's result: initialize is the last field it knows. */
static void test_result_small(void)
{
    g_result.known.size = offsetof(upti_tool_configure_result_t, finalize);
    g_result.known.initialize = init_record;
    g_result.known.tool_data = &g_result; /* past its size: must not be read */
    CHECK_STATUS(upti_force_configure(configure_result), UPTI_STATUS_SUCCESS);
    CHECK_EQ_U64(g_initialized, 1);
    CHECK(g_tool_data_seen == NULL);
}

static void test_result_unknown(void)
{
    g_result.known.size = sizeof g_result;
    g_result.known.initialize = init_record;
    g_result.future = 42;
    /* UPTI's stderr line, caught through a pipe */
    capture_stderr_t c;
    CHECK(capture_stderr_begin(&c) == 0);
    CHECK_STATUS(upti_force_configure(configure_result), UPTI_STATUS_SUCCESS);
    char said[1024];
    CHECK(capture_stderr_end(&c, said, sizeof said) > 0);
    say("stderr: %s", said);
    CHECK(strstr(said, "upti: tool ") == said);
    CHECK(strstr(said, "sets fields this UPTI") != NULL);
    CHECK(strstr(said, ": skipped") != NULL);
    CHECK_EQ_U64(g_initialized, 0);
}

UNIT_TEST(struct_size)
{
    static const unit_sub_case_t cases[] = {{"copy", test_copy},
                                            {"buffer_options", test_buffer_options_agents},
                                            {"result_small", test_result_small},
                                            {"result_unknown", test_result_unknown}};
    if (!unit_run_sub_case("struct_size", sub, cases, sizeof cases / sizeof *cases))
        return 2;
    if (test_failures == 0)
        say("struct_size %s: ok", sub);
    return test_failures != 0;
}
