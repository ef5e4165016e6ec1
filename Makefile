# flowcut - see README.md.  `make demo` and `make test` install what is
# missing (scripts/deps.sh), build, and run.
#
# The build says the project's shape.  Each folder other folders use is a
# static library, built once per flavour (release, asan, ubsan, and fuzz for
# the libFuzzer targets); each program is its own sources plus the libraries
# it names.  One table (USES_ below) says which folder may use which: every
# include path follows from it, so the compiler refuses a header across an
# arrow the table does not draw, and `make check-arrows`
# (scripts/check-arrows.sh) names every #include that crosses one.
#
#   $(BUILD)/obj/<flavour>/<folder>/<file>.o      a library's objects
#   $(BUILD)/obj/<flavour>/lib/lib<folder>.a      the library (tests/lib: libtests_lib.a)
#   $(BUILD)/obj/<flavour>/prog/<program>/...     a program's own objects
#   $(BUILD)/<program>, $(BUILD)/asan/<program>, $(BUILD)/ubsan/<program>,
#   $(BUILD)/fuzz/fuzz_<target>                   the programs
#
# V=1 prints every command.

# Debian's programs first (scripts/deps.sh installs them): on these machines
# a pyenv shim stands ahead of /usr/bin/python3 on PATH and costs 0.4 s a
# call, where Debian's python3 starts in 0.05 s - the lab's samplers, which
# call it a few times a second, then sample a second late (issue 19's
# session: test_lab's lease case measured the shim, not flowcut).
export PATH := /usr/bin:/usr/sbin:$(PATH)

# `make` alone builds the programs (the rules below are made by $(eval),
# whose first target would otherwise be the default)
.DEFAULT_GOAL := all

BUILD      ?= build
CC         ?= gcc
FUZZ_CC    ?= clang
# each fuzz target's run: short in `make test` (the regressions replayed,
# shallow faults found), long in `make fuzz`
FUZZ_SECS  ?= 10
FUZZ_LONG  ?= 300
# the build inside `make test`, `make demo` and `make bench`: every core
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
V          ?= 0

DPDK_CFLAGS := $(shell pkg-config --cflags libdpdk 2>/dev/null)
DPDK_LIBS   := -lrte_hash -lrte_rcu -lrte_meter -lrte_ring -lrte_mbuf -lrte_mempool \
               -lrte_net -lrte_eal -lrte_kvargs -lrte_telemetry

# gnu11: C11 plus the GNU extensions DPDK's headers use.
CFLAGS_BASE := -std=gnu11 -D_GNU_SOURCE -DALLOW_EXPERIMENTAL_API -g \
               -Wall -Wextra -Wshadow -Wno-address-of-packed-member
CFLAGS      ?= -O2
SAN_ASAN    := -O1 -fno-omit-frame-pointer -fsanitize=address
SAN_UBSAN   := -O1 -fsanitize=undefined -fno-sanitize-recover=undefined

# ---- the house: which folder may use which ----------------------------------
# driver/'s rooms, one job each (driver/README.md); flowcutd.c, on top, is
# driver/ itself.
DRIVER := driver/base driver/cmd driver/port driver/path driver/ct driver/nft \
          driver/control driver/offload driver/cut driver/ips driver/report

# A folder's sources may #include (and its programs link) their own folder,
# include/flowcut/ (everyone's), and the folders on its line; "dpdk" is DPDK
# (its headers and -lrte_*).  Arrows go one way: nothing uses npu/, driver/,
# ctl/, bench/, tools/ or tests/; tests, bench and tools use what they test.
USES_fastpath          := dpdk
USES_link              :=
USES_settings          :=
USES_inspect           :=
USES_inspector         := inspect
USES_npu               := fastpath link dpdk
USES_driver/base       :=
USES_driver/cmd        := link
USES_driver/port       := driver/base link
USES_driver/path       := driver/base driver/cmd link
USES_driver/ct         := driver/base
USES_driver/nft        := driver/base settings
USES_driver/control    := settings
USES_driver/offload    := driver/base driver/cmd driver/path driver/ct link
USES_driver/cut        := driver/offload driver/nft driver/ct driver/cmd driver/base settings
USES_driver/ips        := driver/cut driver/offload driver/ct driver/path driver/port driver/cmd driver/base settings inspector inspect link
USES_driver/report     := driver/ips driver/cut driver/offload driver/nft driver/ct driver/path driver/port driver/cmd driver/control driver/base settings inspector inspect link
USES_driver            := $(DRIVER) link settings inspector inspect
USES_ctl               := link settings inspect
USES_tests/lib         := fastpath dpdk
USES_tests/unit        := fastpath link settings inspector inspect tools driver/base tests/lib dpdk
USES_tests/unit/driver := fastpath link settings inspector inspect npu $(DRIVER) tests/lib dpdk
USES_tests/integration := fastpath link settings npu $(DRIVER) tests/lib dpdk
USES_tests/fuzz        := fastpath link settings inspector inspect npu $(DRIVER) tools tests/lib dpdk web
USES_bench             := fastpath link settings inspector inspect $(DRIVER) tools tests/lib dpdk
USES_tools             := fastpath driver/base link tests/lib dpdk
USES_web               := settings
USES_tests/unit/web    := web settings
FOLDERS := $(sort $(patsubst USES_%,%,$(filter USES_%,$(.VARIABLES))))

# The folders built as libraries: each takes every .c in it that no program
# below names as its own (npu/npu_main.c).
LIBRARIES := fastpath link settings inspect inspector npu $(DRIVER) tools tests/lib web

# ---- the programs -----------------------------------------------------------
# $(call program,NAME, ITS OWN SOURCES, LIBRARIES IT LINKS, OTHER -l FLAGS)
# makes $(BUILD)/NAME, $(BUILD)/asan/NAME and $(BUILD)/ubsan/NAME.  Its own
# sources live in one folder, whose USES_ line bounds what it may link; its
# include paths are that folder and the libraries it links.  "dpdk" adds
# DPDK's flags and libraries.  A new program is one line.
program = $(eval $(call program_vars,$(strip $1),$(strip $2),$(strip $3),$(strip $4),PROGS))
define program_vars
$5      += $1
SRC_$1  := $2
USE_$1  := $3
LIBS_$1 := $4
HOME_$1 := $(patsubst %/,%,$(dir $(firstword $2)))
endef

# $(call unit,NAME, ITS OWN SOURCES, LIBRARIES, OTHER -l FLAGS, LABEL): a
# program that tests/run.sh runs as a cmocka suite under LABEL (the rest of
# the line: it may hold commas).  `make print-units` lists them.
comma := ,
unit = $(call program,$1,$2,$3,$4)$(eval UNITS += $(strip $1))$(if $(strip $5),,$(error \
	Makefile: unit test $(strip $1) has no label (tests/run.sh prints it)))$(eval \
	LABEL_$(strip $1) := $(strip $5$(if $6,$(comma)$6)$(if $7,$(comma)$7)$(if $8,$(comma)$8)$(if $9,$(comma)$9)))

# $(call fuzz_target,TARGET, ITS OWN SOURCES, LIBRARIES, OTHER -l FLAGS): the
# replayer fuzz_TARGET_replay (with tests/fuzz/replay_main.c) and the
# libFuzzer build fuzz/fuzz_TARGET.  `make print-fuzz` lists the targets.
fuzz_target = $(call program,fuzz_$(strip $1)_replay,$2 tests/fuzz/replay_main.c,$3,$4)$(eval \
	FUZZ_TARGETS += $(strip $1))

#              name               its own sources                         links                      other libraries
$(call program,flowcut-npu,       npu/npu_main.c npu/npu_wire.c,          npu fastpath link dpdk,    -lrte_ethdev)
$(call program,flowcutd,          driver/flowcutd.c driver/flowcutd_coproc.c driver/flowcutd_settings.c, $(DRIVER) link settings inspector inspect, -ljansson -lpthread -lmnl -lnetfilter_conntrack -lnfnetlink -lnftables -lcrypto)
$(call program,flowcutctl,        ctl/flowcutctl.c ctl/ctl_link.c ctl/ctl_daemon.c ctl/ctl_files.c, link settings inspect,     -ljansson -lcrypto -lpcap -lnftables)
$(call program,flowcut-bench,     bench/flowcut-bench.c bench/bench_fastpath.c bench/bench_link.c bench/bench_cut.c bench/bench_ctdump.c bench/bench_read.c bench/bench_rtcache.c bench/bench_inspect.c, fastpath link settings inspector inspect tools driver/cut driver/offload driver/nft driver/ct driver/path driver/port driver/cmd driver/base tests/lib dpdk, -lmnl -lnetfilter_conntrack -lnfnetlink -lnftables -ljansson -lcrypto)
$(call program,flowcut-fpdemo,    tools/flowcut-fpdemo.c,                 fastpath tests/lib dpdk,   )
$(call program,flowcut-ctgen,     tools/flowcut-ctgen.c,                  tools driver/base,         -lmnl -lnetfilter_conntrack -lnfnetlink)
$(call program,flowcut-inspect,   inspector/flowcut-inspect.c,            inspector inspect,         -lcrypto -lseccomp)
$(call program,flowcut-web,       web/flowcut-web.c,                      web settings,              -lmnl -lmicrohttpd -ljansson -lpthread)
$(call program,flowcut-ctleave,   tools/flowcut-ctleave.c,                tools driver/base link,    -lmnl -lnetfilter_conntrack -lnfnetlink)
$(call program,test_driver,       tests/integration/test_driver.c,        driver/report driver/cut driver/offload driver/nft driver/ct driver/path driver/port driver/cmd driver/base settings npu fastpath link tests/lib dpdk, -lcmocka -lpthread -lmnl -lnetfilter_conntrack -lnfnetlink -lnftables -ljansson)
$(call program,test_ct,           tests/integration/test_ct.c,            driver/ct driver/base tests/lib, -lcmocka -lmnl -lnetfilter_conntrack -lnfnetlink)
$(call program,test_npu,          tests/integration/test_npu.c,           fastpath link tests/lib,   -lcmocka -lpcap)
$(call program,test_ctgen_netns,  tests/integration/test_ctgen.c,         ,                          -lcmocka)
$(call program,test_rulecheck_nft, tests/integration/test_rulecheck.c,     driver/nft settings tests/lib, -lcmocka -lmnl -lnftables -ljansson)

# The unit tests: each a program (as above) that tests/run.sh runs as a
# cmocka suite, its release, asan and ubsan builds, under its label (last;
# it may hold commas).  A new unit test is one line.
#           name               its own sources                  links                                    other libraries                label
$(call unit,test_parse,        tests/unit/test_parse.c,         fastpath tests/lib,                      -lcmocka,                      parse)
$(call unit,test_seg,          tests/unit/test_seg.c,           inspect tests/lib fastpath,              -lcmocka,                      segments for the inspector)
$(call unit,test_frag,         tests/unit/test_frag.c,          inspect tests/lib fastpath,              -lcmocka,                      IP fragments put back together as Linux does)
$(call unit,test_fp,           tests/unit/test_fp.c,            fastpath tests/lib dpdk,                 -lcmocka,                      fastpath)
$(call unit,test_fp_mt,        tests/unit/test_fp_mt.c,         fastpath tests/lib dpdk,                 -lcmocka -lpthread,            fastpath threads)
$(call unit,test_fp_tcp,       tests/unit/test_fp_tcp.c,        fastpath,                                -lcmocka,                      fastpath TCP tracking)
$(call unit,test_fp_nat,       tests/unit/test_fp_nat.c,        fastpath tests/lib dpdk,                 -lcmocka,                      fastpath NAT and checksums)
$(call unit,test_link,         tests/unit/test_link.c,          link driver/base,                        -lcmocka -lpthread,            link)
$(call unit,test_cmdq,         tests/unit/driver/test_cmdq.c,          driver/cmd driver/base npu fastpath link tests/lib dpdk, -lcmocka -lpthread,            command client)
$(call unit,test_npu_cmd,      tests/unit/driver/test_npu_cmd.c,       npu fastpath link tests/lib dpdk,       -lcmocka,                      coprocessor commands and events: CONN_READ_BRIEF$(comma) the sweep against the event ring)
$(call unit,test_settings,     tests/unit/test_settings.c,      settings,                                -lcmocka -ljansson,            settings)
$(call unit,test_rtnl,         tests/unit/driver/test_rtnl.c,          driver/path driver/port driver/cmd driver/base tests/lib, -lcmocka -lmnl,                rtnetlink messages)
$(call unit,test_rtcache,      tests/unit/driver/test_rtcache.c,       driver/path driver/port driver/cmd driver/base tests/lib, -lcmocka -lmnl,                route and neighbour cache$(comma) over a stand-in of the host)
$(call unit,test_nhop,         tests/unit/driver/test_nhop.c,          driver/path driver/port driver/cmd driver/base, -lcmocka -lmnl,                next hops: found again by port$(comma) neighbour and MTU at every fill$(comma) reset$(comma) a neighbour's change)
$(call unit,test_list,         tests/unit/test_list.c,          settings,                                -lcmocka -lpthread -ljansson,           list files)
$(call unit,test_fplist,       tests/unit/test_fplist.c,        settings,                                -lcmocka -ljansson,            watched fingerprints file)
$(call unit,test_tls,          tests/unit/test_tls.c,           inspect tests/lib,                       -lcmocka -lcrypto -lpcap,      tls ClientHello)
$(call unit,test_quic,         tests/unit/test_quic.c,          inspect tests/lib,                       -lcmocka -lcrypto,             QUIC Initial)
$(call unit,test_ct_msg,       tests/unit/driver/test_ct_msg.c,        driver/ct driver/base tests/lib,         -lcmocka -lmnl -lnetfilter_conntrack -lnfnetlink -lpcap, conntrack's messages: updates$(comma) the dump$(comma) own events$(comma) parsed as the library)
$(call unit,test_policy,       tests/unit/driver/test_policy.c,        driver/ct,                               -lcmocka -lnetfilter_conntrack, offload policy)
$(call unit,test_offload,      tests/unit/driver/test_offload.c tests/unit/driver/standins.c, driver/offload driver/path driver/ct driver/cmd driver/port driver/base link, -lcmocka -lmnl -lnetfilter_conntrack -lnfnetlink, the binding's state machine$(comma) with stand-ins (no root))
$(call unit,test_cut,          tests/unit/driver/test_cut.c tests/unit/driver/standins.c, driver/report driver/cut driver/offload driver/nft driver/path driver/ct driver/cmd driver/port driver/base settings link, -lcmocka -lmnl -lnetfilter_conntrack -lnfnetlink -lnftables -ljansson, the cut: what it picks$(comma) drops before kills$(comma) batches$(comma) with stand-ins (no root))
$(call unit,test_inspect,      tests/unit/driver/test_inspect.c,       driver/ips driver/base settings inspector inspect tests/lib fastpath, -lcmocka -lcrypto -lpthread -ljansson,   the inspector)
$(call unit,test_dirwatch,     tests/unit/driver/test_dirwatch.c,      driver/base,                             -lcmocka,                      folder watcher: a real inotify on a folder in /tmp)
$(call unit,test_tuple,        tests/unit/driver/test_tuple.c,         driver/base,                             -lcmocka,                      the driver's tuple and its text)
$(call unit,test_hist,         tests/unit/driver/test_hist.c,          driver/base,                             -lcmocka,                      turn times: a fixed histogram's buckets, max and percentiles)
$(call unit,test_first,        tests/unit/driver/test_first.c,         driver/offload driver/base,              -lcmocka,                      qualify to first frame: the sampler's reads and figure)
$(call unit,test_pool,         tests/unit/driver/test_pool.c,          driver/base,                             -lcmocka,                      a free list of one size: kept up to its bound$(comma) reused last in first out$(comma) zeroed)
$(call unit,test_setelem,      tests/unit/driver/test_setelem.c,       driver/nft settings,                     -lcmocka -lmnl -ljansson,               nftables set elements)
$(call unit,test_ctl,          tests/unit/driver/test_ctl.c,           driver/control settings,                 -lcmocka,                      control socket: requests, who may ask what, as nobody (root only))
$(call unit,test_ctstat,      tests/unit/driver/test_ctstat.c,        driver/ct,                               -lcmocka,                      conntrack's own figures from procfs: the stat file as rows$(comma) a folder of 1024 CPUs$(comma) this kernel's)
$(call unit,test_counters,    tests/unit/driver/test_counters.c,      driver/report settings,                 -lcmocka -ljansson,            counters: the answer's document from gathered figures (every key$(comma) its type$(comma) a missing figure left out))
$(call unit,test_ctgen,        tests/unit/test_ctgen.c,         tools driver/base,                       -lcmocka -lmnl -lnetfilter_conntrack -lnfnetlink, flowcut-ctgen: its command line$(comma) tuples$(comma) messages and acks)
$(call unit,test_web,          tests/unit/web/test_web.c,              web settings,                            -lmnl -lcmocka -ljansson -lmicrohttpd -lpthread, flowcut-web: forms$(comma) requests$(comma) Basic auth$(comma) Host and CSRF checks$(comma) metrics and pages from documents)
$(call unit,test_rulecheck,    tests/unit/driver/test_rulecheck.c,     driver/nft tests/lib,                    -lcmocka -ljansson -lnftables, ruleset check: what offload bypasses)

# The fuzz targets: tests/fuzz/fuzz_TARGET.c as fuzz_TARGET_replay (the corpus
# and the regressions replayed, every flavour) and, below, the libFuzzer
# build; tests/run.sh runs both.  A new fuzz target is one line.
#                  target    its own sources              links                                              other libraries
$(call fuzz_target,frame,     tests/fuzz/fuzz_frame.c,     fastpath tests/lib dpdk,                           )
$(call fuzz_target,cmd,       tests/fuzz/fuzz_cmd.c,       npu fastpath link tests/lib dpdk,                  )
$(call fuzz_target,settings,  tests/fuzz/fuzz_settings.c,  settings,                                          -ljansson)
$(call fuzz_target,rtnl,      tests/fuzz/fuzz_rtnl.c,      driver/path driver/port driver/cmd driver/base tests/lib, -lmnl)
$(call fuzz_target,list,      tests/fuzz/fuzz_list.c,      settings,                                          -ljansson)
$(call fuzz_target,tls,       tests/fuzz/fuzz_tls.c,       inspect tests/lib,                                 -lcrypto)
$(call fuzz_target,ct,        tests/fuzz/fuzz_ct.c,        driver/ct driver/base tools tests/lib,                   -lmnl -lnetfilter_conntrack -lnfnetlink)
$(call fuzz_target,ctdump,    tests/fuzz/fuzz_ctdump.c,    driver/ct driver/base tools,                       -lmnl -lnetfilter_conntrack -lnfnetlink)
$(call fuzz_target,ctl,       tests/fuzz/fuzz_ctl.c,       driver/control settings,                           )
$(call fuzz_target,ctstat,    tests/fuzz/fuzz_ctstat.c,    driver/ct,                                         )
$(call fuzz_target,nftset,    tests/fuzz/fuzz_nftset.c,    driver/nft settings,                               -lmnl -ljansson)
$(call fuzz_target,fplist,    tests/fuzz/fuzz_fplist.c,    settings,                                          -ljansson)
$(call fuzz_target,inspect,   tests/fuzz/fuzz_inspect.c,   driver/ips driver/base settings inspector inspect tests/lib fastpath,    -lcrypto -lpthread -ljansson)
$(call fuzz_target,fiwire,    tests/fuzz/fuzz_fiwire.c,    inspector inspect tests/lib,                       -lcrypto)
$(call fuzz_target,quic,      tests/fuzz/fuzz_quic.c,      inspect tests/lib,                                 -lcrypto)
$(call fuzz_target,seg,       tests/fuzz/fuzz_seg.c,       inspect tests/lib fastpath,                        )
$(call fuzz_target,frag,      tests/fuzz/fuzz_frag.c,      inspect tests/lib fastpath,                        )
$(call fuzz_target,ctgen,     tests/fuzz/fuzz_ctgen.c,     tools driver/base,                                 -lmnl -lnetfilter_conntrack -lnfnetlink)
$(call fuzz_target,webform,   tests/fuzz/fuzz_webform.c,   web settings,                                      -lmnl -ljansson -lmicrohttpd -lpthread)
$(call fuzz_target,rulecheck, tests/fuzz/fuzz_rulecheck.c, driver/nft,                                        -ljansson -lnftables)

# libFuzzer builds, $(BUILD)/fuzz/fuzz_<t>: fuzz_<t>_replay with the glue in
# place of the replayer.
$(foreach t,$(FUZZ_TARGETS),$(eval $(call program_vars,fuzz_$t,$(filter-out \
	tests/fuzz/replay_main.c,$(SRC_fuzz_$t_replay)) tests/fuzz/libfuzzer_glue.c,$(USE_fuzz_$t_replay),$(LIBS_fuzz_$t_replay),FUZZ_PROGS)))

# ---- the rules (nothing to edit below for a new file or program) -------------
FLAVOURS   := release asan ubsan fuzz
CC_release := $(CC)
CC_asan    := $(CC)
CC_ubsan   := $(CC)
CC_fuzz    := $(FUZZ_CC)
OPT_release := $(CFLAGS)
OPT_asan   := $(SAN_ASAN)
OPT_ubsan  := $(SAN_UBSAN)
OPT_fuzz   := -O1 -fsanitize=fuzzer-no-link,address,undefined
LDOPT_release := $(CFLAGS) $(LDFLAGS)
LDOPT_asan := $(SAN_ASAN) $(LDFLAGS)
LDOPT_ubsan := $(SAN_UBSAN) $(LDFLAGS)
LDOPT_fuzz := -O1 -fsanitize=fuzzer,address,undefined $(LDFLAGS)
OUT_release := $(BUILD)/
OUT_asan   := $(BUILD)/asan/
OUT_ubsan  := $(BUILD)/ubsan/
OUT_fuzz   := $(BUILD)/fuzz/

# V=1: every command; make -s: nothing but errors; else one line a step.
ifeq ($(V),1)
Q :=
say :=
else ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
Q := @
say = @
else
Q := @
say = @printf '  %-4s %s\n' $1 $2;
endif

# The table is the rule: each program stays in its folder and links only
# what that folder USES.
$(foreach p,$(PROGS),\
  $(if $(filter $(HOME_$p),$(FOLDERS)),,$(error Makefile: program $p lives in $(HOME_$p)/, which has no USES_$(HOME_$p) line in the table))\
  $(if $(filter-out $(HOME_$p)/%,$(SRC_$p)),$(error Makefile: program $p: $(filter-out $(HOME_$p)/%,$(SRC_$p)) not in $(HOME_$p)/ (another folder's code is linked as its library)))\
  $(if $(filter-out $(HOME_$p) $(USES_$(HOME_$p)),$(USE_$p)),$(error Makefile: program $p links $(filter-out $(HOME_$p) $(USES_$(HOME_$p)),$(USE_$p)): no arrow $(HOME_$p) -> $(filter-out $(HOME_$p) $(USES_$(HOME_$p)),$(USE_$p)) in the table (USES_$(HOME_$p) := $(USES_$(HOME_$p))))))

# A program of tests/unit/ (or tests/unit/driver/) is a unit test: tests/run.sh runs it under its label.
$(foreach p,$(filter-out $(UNITS),$(PROGS)),$(if $(filter tests/unit tests/unit/%,$(HOME_$p)),$(error \
  Makefile: $p lives in tests/unit/ but is no unit test: make it a $$(call unit,...) line, with its label)))

PROG_SRC := $(sort $(foreach p,$(PROGS) $(FUZZ_PROGS),$(SRC_$p)))
$(foreach l,$(LIBRARIES),$(eval LIBSRC_$l := $(filter-out $(PROG_SRC),$(wildcard $l/*.c))))

lib_of   = $(BUILD)/obj/$1/lib/lib$(subst /,_,$2).a
# compile flags of code in folder $1 that uses $2
incs_of  = -Iinclude $(addprefix -I,$1 $(filter-out dpdk $1,$2)) $(if $(filter dpdk,$2),$(DPDK_CFLAGS))

# $(call lib_rules,FLAVOUR,FOLDER)
define lib_rules
OBJ_$1_$2 := $(patsubst %.c,$(BUILD)/obj/$1/%.o,$(LIBSRC_$2))
DEPS += $$(OBJ_$1_$2:.o=.d)
$$(OBJ_$1_$2): $(BUILD)/obj/$1/%.o: %.c
	$$(call say,CC,$$@)mkdir -p $$(@D)
	$(Q)$(CC_$1) $(CFLAGS_BASE) $(OPT_$1) $(call incs_of,$2,$(USES_$2)) -MMD -MP -c -o $$@ $$<
# rebuilt whole when a member comes or goes
$(call lib_of,$1,$2).members: FORCE
	@mkdir -p $$(@D); echo '$$(OBJ_$1_$2)' | cmp -s - $$@ || echo '$$(OBJ_$1_$2)' >$$@
$(call lib_of,$1,$2): $$(OBJ_$1_$2) $(call lib_of,$1,$2).members
	$$(call say,AR,$$@)rm -f $$@
	$(Q)$(AR) rcs $$@ $$(OBJ_$1_$2)
endef

# $(call prog_rules,FLAVOUR,PROGRAM)
define prog_rules
OBJ_$1_$2 := $(patsubst %.c,$(BUILD)/obj/$1/prog/$2/%.o,$(SRC_$2))
DEPS += $$(OBJ_$1_$2:.o=.d)
$$(OBJ_$1_$2): $(BUILD)/obj/$1/prog/$2/%.o: %.c
	$$(call say,CC,$$@)mkdir -p $$(@D)
	$(Q)$(CC_$1) $(CFLAGS_BASE) $(OPT_$1) $(call incs_of,$(HOME_$2),$(USE_$2)) -MMD -MP -c -o $$@ $$<
$(OUT_$1)$2: $$(OBJ_$1_$2) $(foreach l,$(filter-out dpdk,$(USE_$2)),$(call lib_of,$1,$l))
	$$(call say,LD,$$@)mkdir -p $$(@D)
	$(Q)$(CC_$1) $(LDOPT_$1) -o $$@ $$(OBJ_$1_$2) \
		-Wl,--start-group $(foreach l,$(filter-out dpdk,$(USE_$2)),$(call lib_of,$1,$l)) -Wl,--end-group \
		$(LIBS_$2) $(if $(filter dpdk,$(USE_$2)),$(DPDK_LIBS)) -lm
endef

$(foreach f,$(FLAVOURS),$(foreach l,$(LIBRARIES),$(eval $(call lib_rules,$f,$l))))
$(foreach f,release asan ubsan,$(foreach p,$(PROGS),$(eval $(call prog_rules,$f,$p))))
$(foreach p,$(FUZZ_PROGS),$(eval $(call prog_rules,fuzz,$p)))

.PHONY: all deps build sanitizers fuzzers fuzz libs test demo bench clean arrows check-arrows print-units print-fuzz FORCE
all: build

deps:
	@scripts/deps.sh

build: $(addprefix $(BUILD)/,$(PROGS))
sanitizers: $(addprefix $(BUILD)/asan/,$(PROGS)) $(addprefix $(BUILD)/ubsan/,$(PROGS))
fuzzers: $(addprefix $(BUILD)/fuzz/,$(FUZZ_PROGS))
libs: $(foreach l,$(LIBRARIES),$(call lib_of,release,$l))

# the lists tests/run.sh runs: the unit tests, "program label" a line, and
# the fuzz targets, one a line
# (printed by make itself: a label may hold any character but a newline)
print-units:
	@:$(foreach u,$(UNITS),$(info $u $(LABEL_$u)))
print-fuzz:
	@:$(foreach t,$(FUZZ_TARGETS),$(info $t))

# the table, one "folder: uses" line each (scripts/check-arrows.sh reads it)
arrows:
	@$(foreach f,$(FOLDERS),echo '$f: $(USES_$f)';)

check-arrows:
	@scripts/check-arrows.sh

test: deps
	$(MAKE) -j$(JOBS) build sanitizers fuzzers
	@BUILD=$(BUILD) FUZZ_SECS=$(FUZZ_SECS) tests/run.sh

# the fuzz targets alone, FUZZ_LONG seconds each (a crash kept as in make test)
fuzz: deps
	$(MAKE) -j$(JOBS) fuzzers
	@BUILD=$(BUILD) FUZZ_SECS=$(FUZZ_LONG) tests/run.sh --fuzz

# the cut of a 400 Mbit/s UDP flood, "Cut in hardware" on and then off
demo: deps
	$(MAKE) -j$(JOBS) build
	BUILD=$(BUILD) lab/cut.sh --udp --rate 400M --hw on,off
	BUILD=$(BUILD) lab/peer.sh --runs 5 --secs 3

bench: deps
	$(MAKE) -j$(JOBS) build
	$(BUILD)/flowcut-bench fastpath
	$(BUILD)/flowcut-bench link
	$(BUILD)/flowcut-bench cut
	$(BUILD)/flowcut-bench ruleset
	$(BUILD)/flowcut-bench read
	$(BUILD)/flowcut-bench rtcache
	$(BUILD)/flowcut-bench ctdump
	lab/reload.sh
	lab/scale.sh 1000000 --figures all
	lab/peer.sh --wire af_packet
	lab/peer.sh --wire af_xdp

# ---- make install, make uninstall ------------------------------------------
# Where Debian puts them: the daemons and the tool in $(PREFIX)/sbin (each
# needs root for nearly everything, as nft and conntrack do: man section 8),
# man pages in $(PREFIX)/share/man/man8, the units where systemd looks for
# them - /lib/systemd/system for PREFIX=/usr (Debian 12's packages), else
# $(PREFIX)/lib/systemd/system (/usr/local/lib/systemd/system is on
# systemd's own path: the local administrator's) - and the users' sysusers.d
# file beside them.  The programs read /etc/flowcut and the units
# /etc/default/flowcut whatever the PREFIX: those two are made only when
# missing (never an operator's overwritten; ETC=no: not at all, the Debian
# package's postinst makes them), and `make uninstall` takes them only when
# they are still as installed.  flowcut-web is installed when this Makefile
# builds it (its program line), with its unit and man page.  The units'
# ExecStart names $(SBINDIR).
PREFIX      ?= /usr/local
SBINDIR     ?= $(PREFIX)/sbin
MAN8DIR     ?= $(PREFIX)/share/man/man8
DATADIR     ?= $(PREFIX)/share/flowcut
UNITDIR     ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
SYSUSERSDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/sysusers.d,$(PREFIX)/lib/sysusers.d)
ETC         ?= yes
INSTALL_PROGS := flowcut-npu flowcutd flowcut-inspect flowcutctl $(filter flowcut-web,$(PROGS))
INSTALL_UNITS := $(filter-out flowcutctl,$(INSTALL_PROGS))
D := $(DESTDIR)

.PHONY: programs install uninstall
# what install installs, and nothing else (the Debian package builds this)
programs: $(addprefix $(BUILD)/,$(INSTALL_PROGS))
install: programs
	install -d $(D)$(SBINDIR) $(D)$(MAN8DIR) $(D)$(UNITDIR) $(D)$(SYSUSERSDIR) $(D)$(DATADIR)
	install -m 0755 $(addprefix $(BUILD)/,$(INSTALL_PROGS)) $(D)$(SBINDIR)/
	$(foreach p,$(INSTALL_PROGS),install -m 0644 docs/man/$p.8 $(D)$(MAN8DIR)/ &&) true
	$(foreach p,$(INSTALL_UNITS),sed 's#/usr/local/sbin/#$(SBINDIR)/#g' deploy/$p.service \
		>$(D)$(UNITDIR)/$p.service && chmod 0644 $(D)$(UNITDIR)/$p.service &&) true
	$(foreach u,flowcut-inspect $(filter flowcut-web,$(INSTALL_PROGS)),install -m 0644 deploy/$u.socket $(D)$(UNITDIR)/$u.socket &&) true
	install -m 0644 deploy/flowcut.sysusers $(D)$(SYSUSERSDIR)/flowcut.conf
	install -m 0644 deploy/flowcut.default $(D)$(DATADIR)/flowcut.default
	install -m 0644 deploy/af_xdp.conf $(D)$(DATADIR)/af_xdp.conf
	rm -f $(D)$(DATADIR)/settings.conf
	$(BUILD)/flowcutctl --settings $(D)$(DATADIR)/settings.conf settings set offload on >/dev/null
ifeq ($(ETC),yes)
	install -d $(D)/etc/flowcut $(D)/etc/default
	test -e $(D)/etc/flowcut/settings.conf || install -m 0644 $(D)$(DATADIR)/settings.conf $(D)/etc/flowcut/
	test -e $(D)/etc/default/flowcut || install -m 0644 deploy/flowcut.default $(D)/etc/default/flowcut
endif

# every name install may have put there (flowcut-web's too, built or not)
uninstall:
	rm -f $(foreach p,flowcut-npu flowcutd flowcut-inspect flowcutctl flowcut-web,$(D)$(SBINDIR)/$p \
		$(D)$(MAN8DIR)/$p.8 $(D)$(UNITDIR)/$p.service) $(D)$(UNITDIR)/flowcut-inspect.socket $(D)$(UNITDIR)/flowcut-web.socket \
		$(D)$(SYSUSERSDIR)/flowcut.conf
	! cmp -s $(D)/etc/flowcut/settings.conf $(D)$(DATADIR)/settings.conf || rm -f $(D)/etc/flowcut/settings.conf
	! cmp -s $(D)/etc/default/flowcut $(D)$(DATADIR)/flowcut.default || rm -f $(D)/etc/default/flowcut
	rm -f $(D)$(DATADIR)/settings.conf $(D)$(DATADIR)/flowcut.default $(D)$(DATADIR)/af_xdp.conf
	-rmdir $(D)$(DATADIR) $(D)/etc/flowcut 2>/dev/null

clean:
	rm -rf $(BUILD)

-include $(DEPS)
