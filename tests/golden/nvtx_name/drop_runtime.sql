-- An export with kernels and NVTX ranges but no CUDA API calls: nvtx-name has nothing to join.
DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME;
