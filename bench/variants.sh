A=/tmp/b/bin/attn-run
for mb in 0 3; do for d in 64 128; do for c in none top_left; do for s in 4096 16384; do
  r=$(ATTN_GPU_MIN_BLOCKS_PER_SM=$mb $A --target gpu --bench --batch $((16384/s)) --heads $((2048/d)) --seqlen-q $s --seqlen-kv $s --head-dim $d --dtype bf16 --layout bhsd --causal $c | tail -1)
  echo "minblocks=$mb d=$d causal=$c s=$s $r"
done; done; done; done
