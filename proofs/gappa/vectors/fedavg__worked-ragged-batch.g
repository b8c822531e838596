# fedavg/worked-ragged-batch: every expected number of golden/fedavg/worked-ragged-batch.json
# (the run replayed by proofs/gappa/make_vectors.py; do not edit)
# bound: |fl - exact| <= 16 u at most (1.78e-15), 6 numbers
# tolerance: atol 1e-15, rtol 1e-14; tightest margin at record 2 (value 1.0): tolerance 1.1e-14 = 19.8 x (bound 4.44e-16 + half an ulp)
# control: none (the kernels' scripts carry the controls)
@rnd = float<ieee_64, ne>;
r1 rnd= 1 * 0;
x2 = 1 * 0;
r3 rnd= r1 - 0;
x4 = x2 - 0;
r5 rnd= 1 * 0;
x6 = 1 * 0;
r7 rnd= r5 - 1b2;
x8 = x6 - 1b2;
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
r22 rnd= r20 - 1b3;
x23 = x21 - 1b3;
r24 rnd= 1 / 1;
x25 = 1 / 1;
r26 rnd= 1 * r24;
x27 = 1 * x25;
r29 = r26 * (1 * r22) + delta28 * 2199023255553b-93 * (|r26| * (|1 * r22|));
x30 = x27 * (1 * x23);
r31 rnd= 1b-1 * r29;
x32 = 1b-1 * x30;
r33 rnd= r18 - r31;
x34 = x19 - x32;
x36 = 3 / 3;
r35 = rnd(x36);
r37 rnd= r35 * r33;
x38 = x36 * x34;
{ delta13 in [-1, 1] /\ delta28 in [-1, 1] -> |0 - 0| <= 0 /\ |r18 - x19| <= 1b-51 /\ |r33 - x34| <= 1b-49 /\ |r37 - x38| <= 1b-49 }
