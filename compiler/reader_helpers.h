/* The reader's helpers (reader_ops.h): the interpreter
 * (runtime/user_side.c) compiles them, after defining u64, s64, u32, u16,
 * u8 and memcpy; the build makes the C between the markers the string
 * ut_reader_helpers_c, which the native generator writes into every reader's
 * C as it is. */
#ifndef UT_READER_HELPERS_H
#define UT_READER_HELPERS_H

/* ---- the reader's C: begin ---- */
struct str { const char *p; u64 len; };
static inline u64 ld8(const void *p) { u64 v; __builtin_memcpy(&v, p, 8); return v; }
static inline u64 ld4(const void *p) { u32 v; __builtin_memcpy(&v, p, 4); return v; }
static inline void st8(void *p, u64 v) { __builtin_memcpy(p, &v, 8); }
static inline void st4(void *p, u32 v) { __builtin_memcpy(p, &v, 4); }
static inline struct str str_in(const void *p, u64 cap)
{
	const char *s = p;
	u64 n = 0;
	while (n < cap && s[n])
		n++;
	return (struct str){s, n};
}
#define no_str ((struct str){"", 0})
static inline void put_str(u8 *to, struct str s, u64 size)
{
	memcpy(to, s.p, s.len < size ? s.len : size);
}
static inline u64 str_eq(struct str a, struct str b, u64 n)
{
	u64 la = a.len < n ? a.len : n, lb = b.len < n ? b.len : n;
	if (la != lb)
		return 0;
	for (u64 k = 0; k < la; k++)
		if (a.p[k] != b.p[k])
			return 0;
	return 1;
}
static inline u64 str_int(struct str s, u64 n)
{
	u64 a = 0;
	for (u64 k = 0; k < s.len && k < n && k < 8; k++)
		a |= (u64)(u8)s.p[k] << (8 * k);
	return a;
}
static inline u64 sdiv(u64 a, u64 b, int modulo)
{
	int na = (s64)a < 0, nb = (s64)b < 0;
	u64 x = na ? 0 - a : a, y = nb ? 0 - b : b;
	if (modulo) {
		u64 r = y ? x % y : x;
		return na ? 0 - r : r;
	}
	u64 q = y ? x / y : 0;
	return na != nb ? 0 - q : q;
}
/* ---- the reader's C: end ---- */


#endif
