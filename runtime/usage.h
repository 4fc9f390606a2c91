/* The --help text. */
#ifndef UT_USAGE_H
#define UT_USAGE_H
extern const char ut_usage_text[];
#endif
