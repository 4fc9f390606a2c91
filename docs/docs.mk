# Documentation and installation, included by the top Makefile.
#
#   --help text  $(GEN_DIR)/usage.c, generated from docs/usage.txt
#   man page     $(BUILD)/uring-trace.1, generated from the same file
#   make install / make uninstall   (PREFIX, DESTDIR)
#   make docs-picture   docs/images/demo.svg, the README's picture
#
# docs/usage.txt is the one source of the options list: edit it, never the
# generated files.

UT_VERSION_TXT := $(shell sed -n 's/^\#define UT_VERSION "\(.*\)"/\1/p' runtime/main.c)
UT_BINDIR  := $(PREFIX)/bin
UT_LIBDIR  := $(PREFIX)/lib/uring-trace
UT_DATADIR := $(PREFIX)/share/uring-trace
UT_MANDIR  := $(PREFIX)/share/man/man1
UT_COMPDIR := $(PREFIX)/share/bash-completion/completions
MAN        := $(BUILD)/uring-trace.1

# ---- --help and the man page from docs/usage.txt ----
$(GEN_DIR)/usage.c: docs/usage.txt docs/usage.awk
	@mkdir -p $(dir $@)
	awk -v mode=c -f docs/usage.awk docs/usage.txt > $@.tmp && mv $@.tmp $@

# LIB_OBJ is fixed before this fragment is read; an extra prerequisite of
# the archive is still part of its $^.
$(LIB): $(BUILD)/gen-obj/usage.o

$(MAN): docs/usage.txt docs/usage.awk runtime/main.c
	@mkdir -p $(dir $@)
	awk -v mode=man -v version='$(UT_VERSION_TXT)' -v prefix='$(PREFIX)' -f docs/usage.awk docs/usage.txt > $@.tmp && mv $@.tmp $@

all: $(MAN)

# ---- where the installed binary looks for its files ----
# The binary finds bpf/ut.h, stdlib/ and scripts/ under UT_DATADIR and
# libut-bpfcc.so in UT_LIBDIR (after the source tree around it).  The
# objects that use them are rebuilt when PREFIX changes.
UT_PATH_OBJ := $(BUILD)/runtime/main.o $(BUILD)/runtime/cache.o $(BUILD)/runtime/bpfcc_loader.o
$(UT_PATH_OBJ): CFLAGS += -DUT_DATADIR='"$(UT_DATADIR)"' -DUT_LIBDIR='"$(UT_LIBDIR)"'
$(UT_PATH_OBJ): $(BUILD)/gen/prefix.txt

$(BUILD)/gen/prefix.txt: ut-prefix-check
	@mkdir -p $(dir $@)
	@echo '$(UT_DATADIR) $(UT_LIBDIR)' | cmp -s - $@ || echo '$(UT_DATADIR) $(UT_LIBDIR)' > $@

.PHONY: ut-prefix-check
ut-prefix-check:

# ---- the README's picture: the demo trace's busiest 0.8 ms, rendered ----
# Needs root (it traces the demo workload, as `make demo`).
.PHONY: docs-picture
docs-picture: all
	DEMO_TRACE=demo.fxt tests/demo.sh >/dev/null
	$(BIN) render --busiest 0.8 -o docs/images/demo.svg demo.fxt

# ---- install ----
install: $(BIN) $(BPFCC) $(MAN)
	install -d $(DESTDIR)$(UT_BINDIR) $(DESTDIR)$(UT_LIBDIR) $(DESTDIR)$(UT_MANDIR) $(DESTDIR)$(UT_COMPDIR) \
		$(DESTDIR)$(UT_DATADIR)/bpf $(DESTDIR)$(UT_DATADIR)/stdlib $(DESTDIR)$(UT_DATADIR)/scripts
	install -m 755 $(BIN) $(DESTDIR)$(UT_BINDIR)/uring-trace
	install -m 755 $(BPFCC) $(DESTDIR)$(UT_LIBDIR)/libut-bpfcc.so
	install -m 644 bpf/*.h $(DESTDIR)$(UT_DATADIR)/bpf/
	install -m 644 stdlib/*.ut $(DESTDIR)$(UT_DATADIR)/stdlib/
	install -m 644 scripts/*.ut $(DESTDIR)$(UT_DATADIR)/scripts/
	install -m 644 $(MAN) $(DESTDIR)$(UT_MANDIR)/uring-trace.1
	install -m 644 docs/uring-trace.bash $(DESTDIR)$(UT_COMPDIR)/uring-trace

uninstall:
	rm -f $(DESTDIR)$(UT_BINDIR)/uring-trace $(DESTDIR)$(UT_MANDIR)/uring-trace.1 \
		$(DESTDIR)$(UT_COMPDIR)/uring-trace
	rm -rf $(DESTDIR)$(UT_LIBDIR) $(DESTDIR)$(UT_DATADIR)
