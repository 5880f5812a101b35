# partner_svc: PostgreSQL extension (PGXS) plus the sandbox program that
# fakes the partner services.  Every .c under src/ is part of the extension,
# every .c under src/sandbox/ part of the sandbox.

EXTENSION = partner_svc
MODULE_big = partner_svc
# The install script is assembled from sql/install/*.sql, one file per
# area (wrapper, functions, rate limiter, webhooks), in name order.
DATA_built = sql/partner_svc--0.1.sql
OBJS = $(patsubst %.c,%.o,$(wildcard src/*.c))
PG_CONFIG ?= pg_config
PG_CPPFLAGS = -I$(srcdir)/src -I$(libpq_srcdir)
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wno-missing-field-initializers -Wno-sign-compare
SHLIB_LINK = -lcurl -lmicrohttpd -lpq

# pg_regress is driven by test/run_tests.sh (throw-away instance, sandbox).
EXTRA_CLEAN = src/sandbox/partner_svc_sandbox

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Every module includes the one shared header: a change to it (a struct's
# layout) must rebuild them all.
$(OBJS): src/partner_svc.h

sql/partner_svc--0.1.sql: $(sort $(wildcard sql/install/*.sql))
	( echo '-- partner_svc--0.1.sql: built by make from the files sql/install/NN_name.sql; do not edit'; \
	  echo; printf '%s\n' '\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit'; \
	  for f in $^; do echo; echo "-- from $$f"; sed '/^\\echo Use/d; /^-- complain if script/d' $$f; done ) > $@

# PGXS knows no header dependencies; every module includes the one header.
$(OBJS): src/partner_svc.h
# ... and the files of one module their private header.
$(filter src/http.o src/http_%.o,$(OBJS)): src/http_int.h
$(filter src/json_decode%.o,$(OBJS)): src/json_decode_int.h
$(filter src/fdw_modify%.o,$(OBJS)): src/fdw_modify_int.h
$(filter src/ratelimit%.o src/quota%.o,$(OBJS)): src/ratelimit_int.h

SANDBOX = src/sandbox/partner_svc_sandbox
SANDBOX_SRCS = $(wildcard src/sandbox/core/*.c src/sandbox/services/*.c)
SANDBOX_CFLAGS = -O2 -g -std=gnu11 -Wall -Wextra -Werror \
	-Wno-unused-parameter -Wno-missing-field-initializers -pthread

all: $(SANDBOX)

$(SANDBOX): $(SANDBOX_SRCS) src/sandbox/sandbox.h
	$(CC) $(SANDBOX_CFLAGS) -Isrc/sandbox -o $@ $(SANDBOX_SRCS) \
		-lmicrohttpd -ljansson -lcurl -lm

sandbox: $(SANDBOX)

install: install-sandbox

install-sandbox: $(SANDBOX)
	$(INSTALL_PROGRAM) $(SANDBOX) '$(DESTDIR)$(bindir)/partner_svc_sandbox'

.PHONY: sandbox install-sandbox
