# SPDX-License-Identifier: MIT
"""What the OpenCL and Vulkan generators (opencl/generate.py, vulkan/generate.py)
write the same way: the end of a public operation header (argument and
return-value unions, callback payload), and the outputs, rewritten only where
their text changed (so that nothing that includes them is rebuilt for nothing).

Each call is an object with .name, .ret (its C return type), .params (each
with .decl(), its C declaration) and .retfield() (the return-value union's
member for it, None for void).
"""


def gen_header_end(calls, api, result_doc):
    """The end of the public header <upti/<api>_api.h>: upti_<api>_api_args_t,
    upti_<api>_api_retval_t, the payload upti_callback_tracing_<api>_api_data_t
    (result_doc: the comment of its result field, each line indented) and the
    closing of the header."""
    o = ['/** Arguments of each call, as the application passed them. */\n',
         f'typedef union upti_{api}_api_args_t {{\n']
    for c in calls:
        o.append('    struct {\n')
        for p in c.params:
            o.append(f'        {p.decl()};\n')
        if not c.params:
            o.append('        char unused;\n')
        o.append(f'    }} {c.name};\n')
    o.append(f'}} upti_{api}_api_args_t;\n\n')
    o.append('/** Return value of the call (valid at EXIT); the member is named after the type. */\n')
    o.append(f'typedef union upti_{api}_api_retval_t {{\n')
    seen = set()
    for c in calls:
        m = c.retfield()
        if m and m not in seen:
            seen.add(m)
            o.append(f'    {c.ret}{"" if c.ret.endswith("*") else " "}{m};\n')
    o.append(f'}} upti_{api}_api_retval_t;\n\n')
    article = 'an' if api[0] in 'aeiou' else 'a'
    o.append(f'/** Payload of {article} {api.upper()}_API callback record. */\n')
    o.append(f'typedef struct upti_callback_tracing_{api}_api_data_t {{\n'
             f'    size_t size; /**< sizeof(upti_callback_tracing_{api}_api_data_t) */\n'
             f'    upti_{api}_api_args_t args;\n'
             f'    upti_{api}_api_retval_t retval;\n'
             f'{result_doc}'
             '    int64_t result;\n'
             f'}} upti_callback_tracing_{api}_api_data_t;\n\n')
    o.append('UPTI_EXTERN_C_END\n\n#endif\n')
    return ''.join(o)


def write_outputs(outputs):
    """Writes each (path, text) whose file does not hold that text already."""
    for path, text in outputs:
        try:
            if open(path).read() == text:
                continue
        except OSError:
            pass
        with open(path, 'w') as fh:
            fh.write(text)
