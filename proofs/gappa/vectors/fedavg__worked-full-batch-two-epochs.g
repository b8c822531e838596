# fedavg/worked-full-batch-two-epochs: every expected number of golden/fedavg/worked-full-batch-two-epochs.json
# (the run replayed by proofs/gappa/make_vectors.py; do not edit)
# bound: |fl - exact| <= 8 u at most (8.88e-16), 6 numbers
# tolerance: atol 1e-15, rtol 1e-14; tightest margin at record 3 (value 1.5): tolerance 1.6e-14 = 16 x (bound 8.88e-16 + half an ulp)
# control: none (the kernels' scripts carry the controls)
@rnd = float<ieee_64, ne>;
r1 rnd= 1 * 0;
x2 = 1 * 0;
r3 rnd= r1 - 1;
x4 = x2 - 1;
r5 rnd= 1 * 0;
x6 = 1 * 0;
r7 rnd= r5 - 3;
x8 = x6 - 3;
r9 rnd= 1 / 1b1;
x10 = 1 / 1b1;
r11 rnd= 1 * r9;
x12 = 1 * x10;
r14 = r11 * (1 * r3 + 1 * r7) + delta13 * 3298534883329b-93 * (|r11| * (|1 * r3| + |1 * r7|));
x15 = x12 * (1 * x4 + 1 * x8);
r16 rnd= 1b-1 * r14;
x17 = 1b-1 * x15;
r18 rnd= 0 - r16;
x19 = 0 - x17;
r20 rnd= 1 * r18;
x21 = 1 * x19;
r22 rnd= r20 - 1;
x23 = x21 - 1;
r24 rnd= 1 * r18;
x25 = 1 * x19;
r26 rnd= r24 - 3;
x27 = x25 - 3;
r28 rnd= 1 / 1b1;
x29 = 1 / 1b1;
r30 rnd= 1 * r28;
x31 = 1 * x29;
r33 = r30 * (1 * r22 + 1 * r26) + delta32 * 3298534883329b-93 * (|r30| * (|1 * r22| + |1 * r26|));
x34 = x31 * (1 * x23 + 1 * x27);
r35 rnd= 1b-1 * r33;
x36 = 1b-1 * x34;
r37 rnd= r18 - r35;
x38 = x19 - x36;
x40 = 2 / 2;
r39 = rnd(x40);
r41 rnd= r39 * r37;
x42 = x40 * x38;
{ delta13 in [-1, 1] /\ delta32 in [-1, 1] -> |0 - 0| <= 0 /\ |r18 - x19| <= 1b-51 /\ |r37 - x38| <= 1b-50 /\ |r41 - x42| <= 1b-50 }
