# The soak test (tests/soak/README.md): the default script under --ring for
# SOAK_MINUTES (default 30) while io_uring programs come and go.  Outside
# `make test`: it takes half an hour.
#
#   make soak                       the bundled workloads
#   make soak LIBURING_TEST_DIR=... liburing's test suite (its built test/)
SOAK_MINUTES ?= 30

.PHONY: soak
soak: all
	LIBURING_TEST_DIR=$(LIBURING_TEST_DIR) tests/soak/soak.sh $(SOAK_MINUTES)
