// SPDX-License-Identifier: MIT
#version 450
// vk_compute's kernel: out[i] = in[i] * 2 + i.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { uint data_in[]; };
layout(std430, binding = 1) writeonly buffer Out { uint data_out[]; };
layout(push_constant) uniform Params { uint count; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < count)
        data_out[i] = data_in[i] * 2u + i;
}
