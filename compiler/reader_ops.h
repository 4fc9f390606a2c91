/* The reader's operations, defined once for both ways it runs a script's
 * statements: the interpreter (runtime/user_side.c) compiles each as C,
 * and the native generator (compiler/gen_native.c) writes each as its
 * text, so they give the same values either way.  The helpers they call
 * (sdiv(), str_eq()) are in reader_helpers.h, which the interpreter
 * compiles and the generator writes into every reader's C. */
#ifndef UT_READER_OPS_H
#define UT_READER_OPS_H

/* The C of reader_helpers.h, as a string (the build makes it: Makefile). */
extern const char ut_reader_helpers_c[];

/* The operations on two integers, a and b: each as C computes it. */
#define UT_UX_BINARY_OPS(X)                                                                                       \
	X(UT_UX_ADD, a + b)                                                                                          \
	X(UT_UX_SUB, a - b)                                                                                          \
	X(UT_UX_MUL, a * b)                                                                                          \
	X(UT_UX_UDIV, b ? a / b : 0)                                                                                 \
	X(UT_UX_UMOD, b ? a % b : a)                                                                                 \
	X(UT_UX_SDIV, sdiv(a, b, 0))                                                                                 \
	X(UT_UX_SMOD, sdiv(a, b, 1))                                                                                 \
	X(UT_UX_AND, a & b)                                                                                          \
	X(UT_UX_OR, a | b)                                                                                           \
	X(UT_UX_XOR, a ^ b)                                                                                          \
	X(UT_UX_SHL, a << (b & 63))                                                                                  \
	X(UT_UX_USHR, a >> (b & 63))                                                                                 \
	X(UT_UX_SSHR, (u64)((s64)a >> (b & 63)))                                                                     \
	X(UT_UX_EQ, (u64)(a == b))                                                                                   \
	X(UT_UX_NE, (u64)(a != b))                                                                                   \
	X(UT_UX_ULT, (u64)(a < b))                                                                                   \
	X(UT_UX_ULE, (u64)(a <= b))                                                                                  \
	X(UT_UX_SLT, (u64)((s64)a < (s64)b))                                                                         \
	X(UT_UX_SLE, (u64)((s64)a <= (s64)b))

/* UT_UX_TRUNC: to bytes, the cast of a signed value and of an unsigned
 * one, each applied to a u64; other sizes leave it as it is. */
#define UT_UX_TRUNCATIONS(X)                                                                                      \
	X(1, (u64)(s64)(signed char), (u64)(u8))                                                                     \
	X(2, (u64)(s64)(short), (u64)(u16))                                                                          \
	X(4, (u64)(s64)(int), (u64)(u32))

#endif
