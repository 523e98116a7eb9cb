/* SPDX-License-Identifier: MIT */
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
    uint32_t hash; /* uvk_spirv_hash of the whole module; 0 if not SPIR-V */
} uvk_spirv_names_t;

/* Reads the names of the SPIR-V module code (size bytes, as
   VkShaderModuleCreateInfo gives it). Returns 0 (out filled with what a
   malformed module held before its fault), -1 if code is not SPIR-V. Never
   reads outside [code, code + size). */
int uvk_spirv_names(const void *code, size_t size, uvk_spirv_names_t *out);

/* A stable name for a module's content: 32-bit FNV-1a over its words, each
   taken in the module's own byte order and fed least significant byte first
   (so a byte-swapped copy hashes alike). n words at w; swapped: the module's
   words are byte-swapped relative to the host. */
uint32_t uvk_spirv_hash(const uint32_t *w, size_t n, int swapped);

#endif
