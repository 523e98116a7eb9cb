/* SPDX-License-Identifier: MIT */
/* A runtime linking only libupti-register: with no tool, registration succeeds. */
#include <upti/register.h>

#include <stdio.h>

static void *table[1];

int main(void)
{
    upti_register_library_id_t id = {0};
    upti_status_t s = upti_register_library_api_table("consumer", 1, table, 1, &id);
    printf("consumer_runtime: status=%d id=%llu\n", (int)s, (unsigned long long)id.handle);
    return s == UPTI_STATUS_SUCCESS && id.handle != 0 ? 0 : 1;
}
