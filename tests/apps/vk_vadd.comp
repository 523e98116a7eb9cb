// SPDX-License-Identifier: MIT
#version 450
// vk_vadd's kernel: c[i] = a[i] + b[i].
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) writeonly buffer C { uint c[]; };
layout(push_constant) uniform Params { uint count; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < count)
        c[i] = a[i] + b[i];
}
