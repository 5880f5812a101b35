# partner_svc: PostgreSQL extension (PGXS) plus the sandbox program that
# fakes the partner services.  Every .c of a layer folder src/LAYER/ is part
# of the extension; src/sandbox/ is the sandbox, built by its own Makefile.

EXTENSION = partner_svc partner_svc_sandbox_helpers
# The tree is read from the directory of this Makefile: empty when make
# runs in the tree, the tree's path and a slash in a build of another
# directory (make -f TREE/Makefile VPATH=TREE, as pg_buildext builds each
# major of the Debian package in build-NN, debian/rules).  Files of the tree
# are found through it; what make builds goes into the current directory.
TREE := $(filter-out ./,$(dir $(firstword $(MAKEFILE_LIST))))
# The version is written in one place, default_version of the tracked
# partner_svc.control; EXTVERSION reads it.  It becomes the C macro
# PSVC_VERSION (partner_svc.version(), the User-Agent), the sandbox's
# --version, the name of the install script, and is checked against
# META.json by the test suite (test/static_checks.sh).
EXTVERSION := $(shell sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\(.*\)'/\1/p" $(TREE)partner_svc.control)
ifeq ($(EXTVERSION),)
$(error no default_version in partner_svc.control)
endif

MODULE_big = partner_svc
# sql/partner_svc--$(EXTVERSION).sql, the install script, is assembled from
# sql/install/*.sql, one file per area, in name order.  The install scripts
# of released versions are frozen and tracked (DATA).  Each upgrade script
# sql/partner_svc--OLD--NEW.sql is assembled from sql/upgrade/OLD--NEW/*.sql
# in name order.
UPGRADE_DIRS = $(sort $(notdir $(wildcard $(TREE)sql/upgrade/*--*)))
UPGRADE_SCRIPTS = $(foreach d,$(UPGRADE_DIRS),sql/partner_svc--$(d).sql)
DATA = $(filter-out sql/partner_svc--$(EXTVERSION).sql $(UPGRADE_SCRIPTS),\
	$(patsubst $(TREE)%,%,$(wildcard $(TREE)sql/partner_svc--*.sql)))
DATA_built = sql/partner_svc--$(EXTVERSION).sql $(UPGRADE_SCRIPTS)
# The kit for downstream test suites (docs/testing-with-the-sandbox.md): the
# helpers extension and the runner.
DATA += kit/partner_svc_sandbox_helpers--1.0.sql kit/partner_svc_sandbox_helpers--1.0--1.1.sql
SCRIPTS = kit/partner_svc_regress
# The extension's sources: one folder per layer under src/ (the sandbox
# apart), docs/architecture.md; headers are found through -I of each.
EXT_DIRS = $(filter-out src/sandbox,$(patsubst $(TREE)%/,%,$(sort $(dir $(wildcard $(TREE)src/*/*.c $(TREE)src/*.c)))))
OBJS = $(patsubst $(TREE)%.c,%.o,$(wildcard $(addprefix $(TREE),$(addsuffix /*.c,$(EXT_DIRS)))))
PG_CONFIG ?= pg_config
PG_CPPFLAGS = $(addprefix -I$(srcdir)/,$(EXT_DIRS)) -I$(libpq_srcdir) -DPSVC_VERSION=\"$(EXTVERSION)\"
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wno-missing-field-initializers -Wno-sign-compare
SHLIB_LINK = -lcurl -lmicrohttpd -lpq -lcrypto

EXTRA_CLEAN = src/sandbox/partner_svc_sandbox

# Tests.  make installcheck runs, against the running server at PGHOST /
# PGPORT (as PGUSER, a superuser; the server must preload partner_svc:
# shared_preload_libraries = 'partner_svc'):
#  - the pg_regress suite, test/sql/NAME.sql against test/expected/NAME.out, in the
#    order of test/schedule, with a sandbox that test/with_sandbox.sh starts
#    for the run (or the one at PSVC_SANDBOX_URL, if set);
#  - the TAP tests (prove_installcheck): the sandbox's own tests over HTTP
#    (test/sandbox/t) and the scenarios (test/scenario), which make their own
#    throw-away clusters (PostgreSQL::Test::Cluster) and so must not run as
#    root.
# bash test/run_tests.sh does all of it from a fresh machine, as root.
REGRESS = $(shell sed -e 's/\#.*//' $(srcdir)/test/schedule)
TAP_TESTS = 1
# Two at a time (PROVE_FLAGS below): each makes its own clusters and
# sandboxes on free ports, and most of them wait on clocks rather than
# use the CPU.  The longest, which mostly wait for real rate-limit windows,
# start first so that the others fill the second slot beside them.
PROVE_SLOW = test/scenario/60_fleet_quota.t test/scenario/66_webhook_config.t \
	test/scenario/71_quota_worker_log.t test/scenario/45_webhook_slow_clients.t
PROVE_TESTS = $(filter $(PROVE_SLOW),$(wildcard test/scenario/*.t)) \
	$(filter-out $(PROVE_SLOW),$(wildcard test/sandbox/t/*.t) $(wildcard test/scenario/*.t))

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The catalogue's rows are checked when the extension is built, not in
# every backend at run time: test/catalog/catalog_check.c, linked with the
# catalogue's own objects (constant data that depends on nothing), fails
# the build on a malformed row.  make catalog-check runs it alone.
CATALOG_OBJS = src/catalog/catalog.o src/catalog/endpoints.o
test/catalog/catalog_check: $(TREE)test/catalog/catalog_check.c $(CATALOG_OBJS)
	@mkdir -p test/catalog
	$(CC) $(CFLAGS) $(PG_CFLAGS) $(CPPFLAGS) -I$(srcdir)/src/catalog -o $@ $< $(CATALOG_OBJS)
src/catalog/catalog.checked: test/catalog/catalog_check
	./test/catalog/catalog_check
	@touch $@
all: src/catalog/catalog.checked
.PHONY: catalog-check
catalog-check: test/catalog/catalog_check
	./test/catalog/catalog_check
EXTRA_CLEAN += test/catalog/catalog_check src/catalog/catalog.checked

# The sandbox fixture of the pg_regress suite wraps pg_regress: it starts
# the installed sandbox, exports PSVC_SANDBOX_URL (the tests read it with
# \getenv), runs pg_regress and stops the sandbox, keeping its status.
pg_regress_installcheck = bash $(srcdir)/test/with_sandbox.sh \
	$(top_builddir)/src/test/regress/pg_regress --inputdir=$(srcdir)/test \
	--bindir='$(bindir)' $(pg_regress_locale_flags) $(EXTRA_REGRESS_OPTS)
PROVE_FLAGS = --timer -j2
installcheck prove_installcheck: export SANDBOX_BIN = $(bindir)/partner_svc_sandbox

# The TAP tests alone (PGXS has the recipe but no target for it), e.g.
# make prove_installcheck PROVE_TESTS=test/scenario/60_upgrade.t
prove_installcheck:
	$(prove_installcheck)

.PHONY: prove_installcheck

# In a build of another directory, the directories of what is built.
ifneq ($(TREE),)
$(shell mkdir -p sql $(EXT_DIRS))
endif

sql/partner_svc--$(EXTVERSION).sql: $(sort $(wildcard $(TREE)sql/install/*.sql))
	( echo '-- partner_svc--$(EXTVERSION).sql: built by make from the files sql/install/NN_name.sql; do not edit'; \
	  echo; printf '%s\n' '\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit'; \
	  for f in $(patsubst $(TREE)%,%,$^); do echo; echo "-- from $$f"; sed '/^\\echo Use/d; /^-- complain if script/d' $(TREE)$$f; done ) > $@

# sql/partner_svc--OLD--NEW.sql from sql/upgrade/OLD--NEW/*.sql.
define upgrade_rule
sql/partner_svc--$(1).sql: $$(sort $$(wildcard $(TREE)sql/upgrade/$(1)/*.sql)) Makefile
	( echo '-- partner_svc--$(1).sql: built by make from the files sql/upgrade/$(1)/NN_name.sql; do not edit'; \
	  echo; printf '%s\n' '\echo Use "ALTER EXTENSION partner_svc UPDATE TO '"'"'$(lastword $(subst --, ,$(1)))'"'"'" to load this file. \quit'; \
	  for f in $$(sort $$(patsubst $(TREE)%,%,$$(wildcard $(TREE)sql/upgrade/$(1)/*.sql))); do echo; echo "-- from $$$$f"; sed '/^\\echo Use/d; /^-- complain if script/d' $(TREE)$$$$f; done ) > $$@
endef
$(foreach d,$(UPGRADE_DIRS),$(eval $(call upgrade_rule,$(d))))

# PGXS knows no header dependencies: every object depends on every header
# of the extension (one header per module, test/include_graph.pl checks
# who includes what), and the version comes from partner_svc.control.
$(OBJS): $(wildcard $(addprefix $(TREE),$(addsuffix /*.h,$(EXT_DIRS)))) Makefile partner_svc.control

# The sandbox is a program of its own with its own Makefile
# (src/sandbox/Makefile); it shares no header with the extension.  It does
# not depend on the major, and is built in the tree even when the extension
# is built elsewhere.
SANDBOX = $(TREE)src/sandbox/partner_svc_sandbox

all: sandbox

sandbox:
	$(MAKE) -C $(TREE)src/sandbox SANDBOX_VERSION=$(EXTVERSION) CC='$(CC)'

$(SANDBOX): sandbox

clean: clean-sandbox

clean-sandbox:
	$(MAKE) -C $(TREE)src/sandbox clean

install: install-sandbox install-path

install-sandbox: sandbox
	$(INSTALL_PROGRAM) $(SANDBOX) '$(DESTDIR)$(bindir)/partner_svc_sandbox'

# partner_svc_sandbox and partner_svc_regress go into PostgreSQL's bindir,
# which is often not on PATH (Debian: /usr/lib/postgresql/15/bin).  When
# root installs for real (no DESTDIR), symlinks to them go into PATH_BINDIR
# too, so both are commands; make install PATH_BINDIR= skips that.
PATH_BINDIR = /usr/local/bin
KIT_PROGRAMS = partner_svc_sandbox partner_svc_regress

install-path: install-sandbox
	@if [ -z '$(DESTDIR)' ] && [ -n '$(PATH_BINDIR)' ] && [ "$$(id -u)" -eq 0 ] && \
	    [ '$(PATH_BINDIR)' != '$(bindir)' ]; then \
		mkdir -p '$(PATH_BINDIR)' && \
		for p in $(KIT_PROGRAMS); do ln -sfn '$(bindir)'/$$p '$(PATH_BINDIR)'/$$p || exit 1; done; \
	fi

uninstall: uninstall-kit

uninstall-kit:
	rm -f '$(DESTDIR)$(bindir)/partner_svc_sandbox'
	@if [ -z '$(DESTDIR)' ] && [ -n '$(PATH_BINDIR)' ]; then \
		for p in $(KIT_PROGRAMS); do \
			[ "$$(readlink '$(PATH_BINDIR)'/$$p 2>/dev/null)" != '$(bindir)'/$$p ] || rm -f '$(PATH_BINDIR)'/$$p; \
		done; \
	fi

.PHONY: sandbox clean-sandbox install-sandbox install-path uninstall-kit
