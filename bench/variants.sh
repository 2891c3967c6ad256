#!/usr/bin/env bash
# Times one schedule knob across the FA3 shapes' corners with attn-run on a
# GPU machine (bf16; d 64/128; causal none/top_left; seq 4k/16k): here
# ATTN_GPU_MIN_BLOCKS_PER_SM 0 (default) vs 3 (docs/perf-notes.md). A
# measurement, not a test: attn-run's own medians, no peers.
#   bash bench/variants.sh     (from the repository root, bundle in /tmp/b)
A=/tmp/b/bin/attn-run
for mb in 0 3; do for d in 64 128; do for c in none top_left; do for s in 4096 16384; do
  r=$(ATTN_GPU_MIN_BLOCKS_PER_SM=$mb $A --target gpu --bench --batch $((16384/s)) --heads $((2048/d)) --seqlen-q $s --seqlen-kv $s --head-dim $d --dtype bf16 --layout bhsd --causal $c | tail -1)
  echo "minblocks=$mb d=$d causal=$c s=$s $r"
done; done; done; done
