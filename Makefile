# flowcut - see README.md.  `make demo` and `make test` install what is
# missing (scripts/deps.sh), build, and run.

BUILD      ?= build
CC         ?= gcc
FUZZ_CC    ?= clang
FUZZ_SECS  ?= 45

DPDK_CFLAGS := $(shell pkg-config --cflags libdpdk 2>/dev/null)
DPDK_LIBS   := -lrte_hash -lrte_rcu -lrte_ring -lrte_mbuf -lrte_mempool \
               -lrte_net -lrte_eal -lrte_kvargs -lrte_telemetry
LIBS_flowcut-npu := -lrte_ethdev

# gnu11: C11 plus the GNU extensions DPDK's headers use.
CFLAGS_BASE := -std=gnu11 -D_GNU_SOURCE -DALLOW_EXPERIMENTAL_API -g \
               -Wall -Wextra -Wshadow -Wno-address-of-packed-member \
               -Iinclude -Ifastpath -Ilink -Inpu -Ictl -Idriver -Isettings -Itests/lib -Itests/fuzz $(DPDK_CFLAGS)
CFLAGS      ?= -O2
SAN_ASAN    := -O1 -fno-omit-frame-pointer -fsanitize=address
SAN_UBSAN   := -O1 -fsanitize=undefined -fno-sanitize-recover=undefined

FP_SRC   := $(wildcard fastpath/*.c)
LIB_SRC  := tests/lib/fc_frame.c tests/lib/fc_eal.c
HDRS     := $(wildcard include/flowcut/*.h fastpath/*.h link/*.h npu/*.h driver/*.h settings/*.h \
              tests/lib/*.h tests/fuzz/*.h)

# name: sources
PROGS := flowcut-npu flowcutctl flowcutd test_npu test_settings test_fp test_fp_mt test_fp_tcp test_fp_nat test_parse test_link flowcut-bench flowcut-fpdemo \
         fuzz_frame_replay fuzz_cmd_replay fuzz_settings_replay fuzz_rtnl_replay test_rtnl
SRC_flowcut-npu        := npu/npu_main.c npu/npu_cmd.c link/lk.c $(FP_SRC)
SRC_flowcutd           := driver/flowcutd.c driver/fd_tap.c driver/fd_relay.c \
                          driver/fd_route.c driver/fd_nhop.c driver/fd_nft.c driver/fd_offload.c link/lk.c \
                          settings/fc_settings.c
LIBS_flowcutd    := -ljansson -lpthread -lmnl -lnetfilter_conntrack -lnfnetlink -lnftables
SRC_flowcutctl         := ctl/flowcutctl.c link/lk.c settings/fc_settings.c
LIBS_flowcutctl  := -ljansson
SRC_test_npu           := tests/integration/test_npu.c link/lk.c tests/lib/fc_frame.c \
                          fastpath/fp_parse.c
LIBS_test_npu    := -lcmocka -lpcap
SRC_test_settings      := tests/unit/test_settings.c settings/fc_settings.c
LIBS_test_settings := -lcmocka
SRC_test_fp            := tests/unit/test_fp.c $(FP_SRC) $(LIB_SRC)
SRC_test_fp_mt         := tests/unit/test_fp_mt.c $(FP_SRC) $(LIB_SRC)
SRC_test_fp_tcp        := tests/unit/test_fp_tcp.c
SRC_test_fp_nat        := tests/unit/test_fp_nat.c fastpath/fp_parse.c tests/lib/fc_frame.c
SRC_test_link          := tests/unit/test_link.c link/lk.c
SRC_test_parse         := tests/unit/test_parse.c $(FP_SRC) $(LIB_SRC)
SRC_flowcut-bench      := bench/flowcut-bench.c link/lk.c $(FP_SRC) $(LIB_SRC)
SRC_flowcut-fpdemo     := tools/flowcut-fpdemo.c $(FP_SRC) $(LIB_SRC)
SRC_fuzz_frame_replay  := tests/fuzz/fuzz_frame.c tests/fuzz/replay_main.c $(FP_SRC) $(LIB_SRC)
SRC_fuzz_cmd_replay    := tests/fuzz/fuzz_cmd.c tests/fuzz/replay_main.c npu/npu_cmd.c \
                          link/lk.c $(FP_SRC) $(LIB_SRC)
SRC_fuzz_settings_replay := tests/fuzz/fuzz_settings.c tests/fuzz/replay_main.c \
                          settings/fc_settings.c
SRC_fuzz_rtnl_replay   := tests/fuzz/fuzz_rtnl.c tests/fuzz/replay_main.c driver/fd_route.c tests/lib/fc_rtnl.c
LIBS_fuzz_rtnl_replay  := -lmnl
SRC_test_rtnl          := tests/unit/test_rtnl.c driver/fd_route.c tests/lib/fc_rtnl.c
LIBS_test_rtnl         := -lcmocka -lmnl
# libFuzzer builds: the target's sources without the replayer
FUZZ_TARGETS := frame cmd settings rtnl
FUZZSRC_rtnl := tests/fuzz/fuzz_rtnl.c driver/fd_route.c tests/lib/fc_rtnl.c
FUZZLIBS_rtnl := -lmnl
FUZZSRC_settings := tests/fuzz/fuzz_settings.c settings/fc_settings.c
FUZZSRC_frame := tests/fuzz/fuzz_frame.c $(FP_SRC) $(LIB_SRC)
FUZZSRC_cmd   := tests/fuzz/fuzz_cmd.c npu/npu_cmd.c link/lk.c $(FP_SRC) $(LIB_SRC)
LIBS_test_fp    := -lcmocka
LIBS_test_parse := -lcmocka
LIBS_test_fp_mt := -lcmocka -lpthread
LIBS_test_fp_tcp := -lcmocka
LIBS_test_fp_nat := -lcmocka
LIBS_test_link  := -lcmocka -lpthread

.PHONY: all deps build sanitizers fuzz test demo bench clean
all: build

deps:
	@scripts/deps.sh

build: $(addprefix $(BUILD)/,$(PROGS))
sanitizers: $(addprefix $(BUILD)/asan/,$(PROGS)) $(addprefix $(BUILD)/ubsan/,$(PROGS))
fuzz: $(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZ_TARGETS))

define prog_rules
$(BUILD)/$(1): $$(SRC_$(1)) $$(HDRS)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_BASE) $$(CFLAGS) -o $$@ $$(SRC_$(1)) $$(LIBS_$(1)) $$(DPDK_LIBS) -lm
$(BUILD)/asan/$(1): $$(SRC_$(1)) $$(HDRS)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_BASE) $$(SAN_ASAN) -o $$@ $$(SRC_$(1)) $$(LIBS_$(1)) $$(DPDK_LIBS) -lm
$(BUILD)/ubsan/$(1): $$(SRC_$(1)) $$(HDRS)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_BASE) $$(SAN_UBSAN) -o $$@ $$(SRC_$(1)) $$(LIBS_$(1)) $$(DPDK_LIBS) -lm
endef
$(foreach p,$(PROGS),$(eval $(call prog_rules,$(p))))

define fuzz_rules
$(BUILD)/fuzz/fuzz_$(1): $$(FUZZSRC_$(1)) tests/fuzz/libfuzzer_glue.c $$(HDRS)
	@mkdir -p $$(@D)
	$$(FUZZ_CC) $$(CFLAGS_BASE) -O1 -fsanitize=fuzzer,address,undefined \
		-o $$@ $$(FUZZSRC_$(1)) tests/fuzz/libfuzzer_glue.c $$(FUZZLIBS_$(1)) $$(DPDK_LIBS) -lm
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_rules,$(t))))

test: deps
	$(MAKE) build sanitizers fuzz
	@BUILD=$(BUILD) FUZZ_SECS=$(FUZZ_SECS) tests/run.sh

demo: deps
	$(MAKE) build
	BUILD=$(BUILD) lab/demo.sh

bench: deps
	$(MAKE) build
	$(BUILD)/flowcut-bench fastpath
	$(BUILD)/flowcut-bench link

clean:
	rm -rf $(BUILD)
