/* Names read from a SPIR-V module (spirv.c). */
#ifndef UPTI_VULKAN_SPIRV_H
#define UPTI_VULKAN_SPIRV_H

#include <stddef.h>
#include <stdint.h>

#define UVK_SPIRV_NAME_MAX 64
#define UVK_SPIRV_MAX_ENTRIES 8

typedef struct uvk_spirv_names_t {
    char file[UVK_SPIRV_NAME_MAX];  /* OpSource's file, last path component; "" if none */
    uint32_t num_entries;
    char entries[UVK_SPIRV_MAX_ENTRIES][UVK_SPIRV_NAME_MAX]; /* OpEntryPoint names, in order */
} uvk_spirv_names_t;

/* Reads the names of the SPIR-V module code (size bytes, as
   VkShaderModuleCreateInfo gives it). Returns 0 (out filled with what a
   malformed module held before its fault), -1 if code is not SPIR-V. Never
   reads outside [code, code + size). */
int uvk_spirv_names(const void *code, size_t size, uvk_spirv_names_t *out);

#endif
