# finetune/worked-mu1: every expected number of golden/finetune/worked-mu1.json
# (the run replayed by proofs/gappa/make_vectors.py; do not edit)
# bound: |fl - exact| <= 0 u at most (0), 5 numbers
# tolerance: atol 1e-15, rtol 1e-14; tightest margin at record 1 (value 2.375): tolerance 2.47e-14 = 111 x (bound 0 + half an ulp)
# control: none (the kernels' scripts carry the controls)
@rnd = float<ieee_64, ne>;
r1 rnd= 3b-2 - 1b2;
x2 = 3b-2 - 1b2;
r3 rnd= 1 * r1;
x4 = 1 * x2;
r5 rnd= 3b-2 - 3b-2;
x6 = 3b-2 - 3b-2;
r7 rnd= 1 * r5;
x8 = 1 * x6;
r9 rnd= r3 + r7;
x10 = x4 + x8;
r11 rnd= 1b-1 * r9;
x12 = 1b-1 * x10;
r13 rnd= 3b-2 - r11;
x14 = 3b-2 - x12;
r15 rnd= r13 - 1b2;
x16 = x14 - 1b2;
r17 rnd= 1 * r15;
x18 = 1 * x16;
r19 rnd= r13 - 3b-2;
x20 = x14 - 3b-2;
r21 rnd= 1 * r19;
x22 = 1 * x20;
r23 rnd= r17 + r21;
x24 = x18 + x22;
r25 rnd= 1b-1 * r23;
x26 = 1b-1 * x24;
r27 rnd= r13 - r25;
x28 = x14 - x26;
{ |3b-2 - 3b-2| <= 0 /\ |r13 - x14| <= 0 /\ |r27 - x28| <= 0 }
