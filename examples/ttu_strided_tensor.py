"""Seed 001: a 3-d tensor walked with adders only.

V1 is laid out with strides (2, 6, 1) for dims (i, j, k), not row-major. Expected:
steps (2, 6, 1), ends (6, 12, 2), all initial values 0, and the stream
0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11. Run it with

    strider ttu examples/ttu_strided_tensor.py
"""
# array: V1=3x2x2/2,6,1@0
for i in range(3):
    for j in range(2):
        for k in range(2):
            V1[i][j][k]
