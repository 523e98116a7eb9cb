-- The fixed trace of the `upti stats --report` goldens (test_reports.py loads it
-- into an empty database written by upti-synth, after deleting synth's rows).
-- One process, two devices: agent 7 (queues 0x10 and 0x11), agent 8 (queue 0x20);
-- threads 100 and 101. The expected numbers test_reports.py checks by hand are
-- worked out in the comments.
INSERT INTO info_process(id, pid, ppid, hostname, rank, command, start, end, wall_start)
VALUES (1, 4242, 1, 'fixture-host', NULL, 'fixture', 0, 20000, 0);
INSERT INTO info_agent(id, process_id, handle, type, runtime, name, vendor, driver_version,
                       compute_units, global_memory_bytes, runtime_handle, node_id)
VALUES (1, 1, 7, 'GPU', 'OpenCL', 'Fixture GPU', 'UPTI', '1.0', 8, 1073741824, 77, 0),
       (2, 1, 8, 'GPU', 'OpenCL', 'Second GPU', 'UPTI', '1.0', 4, 536870912, 88, 1);

INSERT INTO string(id, string) VALUES
 (1, 'OPENCL_API'), (2, 'clEnqueueWriteBuffer'), (3, 'clEnqueueNDRangeKernel'),
 (4, 'clEnqueueReadBuffer'), (5, 'clFinish'),
 (6, 'weird,"name"' || char(10) || char(1) || 'é'),
 (10, '_Z6vecaddPfS_S_i'), (11, '_ZTSN4sycl3_V16detail19__pf_kernel_wrapperI5saxpyEE'),
 (12, 'very_long_kernel_name_for_testing_that_tables_cut_it_to_sixty_characters_and_no_more'),
 (13, 'reduce'), (14, 'NDRANGE'),
 (20, 'HOST_TO_DEVICE'), (21, 'DEVICE_TO_HOST'), (22, 'DEVICE_TO_DEVICE'), (23, 'COPY'),
 (24, 'BARRIER'), (25, 'NONE'),
 (30, 'ALLOCATE'), (31, 'FREE'), (32, 'DEVICE'), (33, 'HOST'),
 (40, 'iteration'), (41, 'inner'), (42, 'setup'), (43, 'phase é');

-- API calls: (id, tid, name, correlation id, start, end, result). Results (api_err_sum):
-- clEnqueueNDRangeKernel 6 calls, 3 errors: -48 (CL_INVALID_KERNEL) twice, -54 once;
-- clEnqueueWriteBuffer 2 calls, 1 error: -9999 (no name); the odd name: no status
-- (INT64_MIN, NULL in apis); the rest 0.
INSERT INTO api(id, process_id, tid, domain_id, name_id, correlation_id, external_id, start, end,
                result)
VALUES (1, 1, 100, 1, 2, 1, 0, 200, 300, 0),
       (2, 1, 100, 1, 3, 2, 0, 1100, 1200, -48),
       (3, 1, 100, 1, 3, 3, 0, 1600, 1700, 0),
       (4, 1, 100, 1, 3, 4, 0, 6100, 6200, -54),
       (5, 1, 100, 1, 3, 5, 0, 6300, 6400, -48),
       (6, 1, 101, 1, 3, 6, 0, 10100, 10200, 0),
       (7, 1, 100, 1, 4, 7, 0, 7500, 7600, 0),
       (8, 1, 100, 1, 2, 8, 0, 8000, 8100, -9999),
       (9, 1, 100, 1, 5, 9, 0, 8900, 8950, 0),
       (10, 1, 101, 1, 6, 10, 0, 12100, 12110, -9223372036854775807 - 1),
       (11, 1, 101, 1, 5, 11, 0, 12200, 12400, 0),
       (12, 1, 100, 1, 3, 13, 0, 6410, 6420, 0);

-- Kernels: vecadd 100, 200, 600 ns (total 900, median 200, stddev sqrt(70000));
-- saxpy 400; the long name 1000 (agent 8); reduce 300, overlapping vecadd's
-- third run on queue 0x10; one kernel that never started (start 0: left out).
INSERT INTO kernel_dispatch(id, process_id, tid, agent_handle, queue_handle, runtime_context,
    kernel_id, name_id, operation_id, correlation_id, external_id, work_dim, grid_x, grid_y,
    grid_z, workgroup_x, workgroup_y, workgroup_z, offset_x, offset_y, offset_z, queued,
    submit, start, end, status)
VALUES (1, 1, 100, 7, 16, 1, 1, 10, 14, 2, 0, 1, 64, 1, 1, 8, 1, 1, 0, 0, 0, 1200, 1250, 1300, 1400, 0),
       (2, 1, 100, 7, 16, 1, 1, 10, 14, 3, 0, 1, 64, 1, 1, 8, 1, 1, 0, 0, 0, 1700, 1800, 1900, 2100, 0),
       (3, 1, 100, 7, 16, 1, 1, 10, 14, 4, 0, 1, 64, 1, 1, 8, 1, 1, 0, 0, 0, 6200, 0, 6500, 7100, 0),
       (4, 1, 100, 7, 17, 1, 2, 11, 14, 5, 0, 1, 64, 1, 1, 8, 1, 1, 0, 0, 0, 6400, 6450, 7000, 7400, 0),
       (5, 1, 101, 8, 32, 2, 3, 12, 14, 6, 0, 1, 64, 1, 1, 8, 1, 1, 0, 0, 0, 10200, 10250, 10300, 11300, 0),
       (6, 1, 100, 7, 16, 1, 4, 13, 14, 13, 0, 1, 64, 1, 1, 8, 1, 1, 0, 0, 0, 6420, 6600, 6900, 7200, 0),
       (7, 1, 100, 7, 16, 1, 1, 10, 14, 0, 0, 1, 64, 1, 1, 8, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);

-- Copies: host to device 1 MB (300 ns) and 3 MB (600 ns), device to host
-- 0.5 MB (200 ns), a device-to-device copy of 2048 bytes never timed, and a
-- barrier (150 ns) that is no copy: sync_sum, not mem_time_sum or mem_size_sum.
INSERT INTO memory_copy(id, process_id, tid, agent_handle, queue_handle, runtime_context,
    operation_id, direction_id, src_agent, dst_agent, bytes, correlation_id, external_id,
    queued, submit, start, end, status)
VALUES (1, 1, 100, 7, 16, 1, 23, 20, 0, 7, 1000000, 1, 0, 300, 350, 400, 700, 0),
       (2, 1, 100, 7, 16, 1, 23, 21, 7, 0, 500000, 7, 0, 7600, 7650, 7700, 7900, 0),
       (3, 1, 100, 7, 17, 1, 23, 20, 0, 7, 3000000, 8, 0, 8100, 8150, 8200, 8800, 0),
       (4, 1, 100, 7, 16, 1, 23, 22, 7, 7, 2048, 0, 0, 0, 0, 0, 0, 0),
       (5, 1, 100, 7, 16, 1, 24, 25, 7, 7, 0, 0, 0, 9000, 9020, 9050, 9200, 0);

-- Allocations on agent 7 (DEVICE): +4 MB, +1 MB, -4 MB, +2 MB: peak 5 MB, 3 MB
-- left; and 1000 bytes of host memory never freed.
INSERT INTO memory_allocate(id, process_id, tid, operation_id, agent_handle, runtime_context,
    type_id, handle, size, flags, correlation_id, external_id, timestamp)
VALUES (1, 1, 100, 30, 7, 1, 32, 4096, 4000000, 0, 0, 0, 100),
       (2, 1, 100, 30, 7, 1, 32, 8192, 1000000, 0, 0, 0, 200),
       (3, 1, 100, 31, 7, 1, 32, 4096, 4000000, 0, 0, 0, 300),
       (4, 1, 100, 30, 7, 1, 32, 12288, 2000000, 0, 0, 0, 400),
       (5, 1, 100, 30, 0, 1, 33, 16384, 1000, 0, 0, 0, 50);

-- Ranges: 'iteration' twice on thread 100 (the first holds 'inner'), 'setup'
-- a start/end range begun on thread 100 and ended on 101, 'phase é' on 101.
INSERT INTO region(id, process_id, tid, end_tid, kind, name_id, depth, domain, category, color,
                   payload_type, payload, correlation_id, start, end)
VALUES (1, 1, 100, 100, 0, 40, 0, 0, 0, 0, 0, 0, 0, 1000, 5000),
       (2, 1, 100, 100, 0, 41, 1, 0, 0, 0, 0, 0, 0, 1500, 2500),
       (3, 1, 100, 100, 0, 40, 0, 0, 0, 0, 0, 0, 0, 6000, 9000),
       (4, 1, 100, 101, 1, 42, 0, 0, 0, 0, 0, 0, 0, 100, 900),
       (5, 1, 101, 101, 0, 43, 0, 0, 0, 0, 0, 0, 0, 10000, 12000);
