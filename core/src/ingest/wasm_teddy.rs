//! Teddy on WebAssembly SIMD: the multi-substring search of the log scanner's anchors
//! ([`super::scan::SignalMatcher::anchors_for`]) in the web page. aho-corasick has Teddy only
//! on x86-64 and aarch64; without it the page ran the whole text through the automaton.
//!
//! Teddy (from Hyperscan): each anchor goes to one of 8 buckets; for each of the first `F`
//! bytes of the anchors (the fingerprint, 1 to 4) two 16-entry tables, indexed by a byte's low
//! and high nibble, give the buckets having an anchor with that nibble there. 16 bytes of text
//! at a time, two `i8x16.swizzle` lookups per fingerprint byte, ANDed across the fingerprint
//! (each shifted by its distance to the last byte, the previous chunk's lanes coming in),
//! leave per byte the buckets of the anchors that may start there: the few such candidates
//! are checked against their buckets' anchors.
//!
//! [`find`] is that loop over any nibble tables, with the check passed in; [`Searcher`] is a
//! complete searcher on it. The loop is written once over [`Vector`]: WebAssembly's `v128` in
//! the page, a plain 16-byte array natively, so the unit tests run the page's logic.

use aho_corasick::{Match, PatternID, Span};

/// The most anchors one [`Searcher`] takes (8 buckets of 8: more make checking slow).
pub const MAX_ANCHORS: usize = 64;
const BUCKETS: usize = 8;
/// The most leading bytes of an anchor [`Searcher`] fingerprints: 3 keep candidates rare in
/// log text for 6 lookups per 16 bytes.
const SEARCHER_FINGERPRINT: usize = 3;

/// The first `at` in `haystack[start..end]` where some bucket's fingerprint (`F` bytes, 1 to
/// 4) matches and `check(at, buckets)` (the buckets whose fingerprint matches at `at`, as
/// bits) says yes, with what it said. `lo[i][n]` / `hi[i][n]` (`i < F`) are the buckets having
/// an anchor whose byte `i` has the low / high nibble `n`: any Teddy's tables. `check` is asked
/// only where the whole fingerprint fits before `end` (an anchor longer than the fingerprint
/// may not: `check` sees to that).
#[inline(always)]
pub fn find<T, const F: usize>(
    lo: &[[u8; 16]],
    hi: &[[u8; 16]],
    haystack: &[u8],
    start: usize,
    end: usize,
    check: impl FnMut(usize, u8) -> Option<T>,
) -> Option<T> {
    let haystack = haystack.get(..end)?;
    if start > end || !(1..=4).contains(&F) || lo.len() < F || hi.len() < F {
        return None;
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        find_chunks::<simd::V128, T, F>(lo, hi, haystack, start, check)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        find_chunks::<portable::Lanes, T, F>(lo, hi, haystack, start, check)
    }
}

/// [`find`] 16 bytes at a time, then the last few starts a byte at a time.
///
/// Lane `k` of the AND holds the candidates whose fingerprint ends at byte `k`, i.e. that
/// start `F - 1` bytes earlier: the lookups for fingerprint byte `i` move up `F - 1 - i`
/// lanes, the previous chunk's last lanes filling in.
#[inline(always)]
fn find_chunks<V: Vector, T, const F: usize>(
    lo: &[[u8; 16]],
    hi: &[[u8; 16]],
    haystack: &[u8],
    start: usize,
    mut check: impl FnMut(usize, u8) -> Option<T>,
) -> Option<T> {
    let nibble = V::splat(0x0f);
    let tables = |i: usize| {
        let i = i.min(F - 1);
        (V::from_bytes(lo[i]), V::from_bytes(hi[i]))
    };
    let (lo0, hi0) = tables(0);
    let (lo1, hi1) = tables(1);
    let (lo2, hi2) = tables(2);
    let (lo3, hi3) = tables(3);
    // Nothing starts before `start`: the first chunk's "previous chunk" matches nothing.
    let (mut prev0, mut prev1, mut prev2) = (V::splat(0), V::splat(0), V::splat(0));
    let mut at = start;
    while haystack.len() - at >= 16 {
        // SAFETY: `at + 16 <= haystack.len()`: the 16 bytes read are in `haystack`.
        let chunk = unsafe { V::load_unaligned(haystack.as_ptr().add(at)) };
        let low = chunk.and(nibble);
        let high = chunk.shr4().and(nibble);
        let in0 = V::lookup(lo0, low).and(V::lookup(hi0, high));
        let candidates = if F == 1 {
            in0
        } else {
            let in1 = V::lookup(lo1, low).and(V::lookup(hi1, high));
            let found = if F == 2 {
                V::shift_in::<1>(prev0, in0).and(in1)
            } else {
                let in2 = V::lookup(lo2, low).and(V::lookup(hi2, high));
                if F == 3 {
                    V::shift_in::<2>(prev0, in0)
                        .and(V::shift_in::<1>(prev1, in1))
                        .and(in2)
                } else {
                    let in3 = V::lookup(lo3, low).and(V::lookup(hi3, high));
                    let found = V::shift_in::<3>(prev0, in0)
                        .and(V::shift_in::<2>(prev1, in1))
                        .and(V::shift_in::<1>(prev2, in2))
                        .and(in3);
                    prev2 = in2;
                    found
                }
            };
            prev0 = in0;
            prev1 = in1;
            found
        };
        let mut lanes = candidates.nonzero_lanes();
        if lanes != 0 {
            let buckets = candidates.to_bytes();
            while lanes != 0 {
                let lane = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                // The first chunk's lanes below `F - 1` are empty (see `prev0`), so this
                // start is never before `start`.
                if let Some(found) = check(at + lane + 1 - F, buckets[lane]) {
                    return Some(found);
                }
            }
        }
        at += 16;
    }
    // The chunks covered the starts before `at + 1 - F`.
    let from = (at + 1).saturating_sub(F).max(start);
    let last = haystack.len().checked_sub(F)?;
    for at in from..=last {
        let mut buckets = 0xff;
        for i in 0..F {
            let byte = haystack[at + i];
            buckets &= lo[i][usize::from(byte & 0x0f)] & hi[i][usize::from(byte >> 4)];
        }
        if buckets != 0 {
            if let Some(found) = check(at, buckets) {
                return Some(found);
            }
        }
    }
    None
}

/// [`slice::make_ascii_lowercase`] 16 bytes at a time: the page's build optimises for size,
/// which leaves a byte loop unvectorised.
pub fn make_ascii_lowercase(bytes: &mut [u8]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        make_ascii_lowercase_chunks::<simd::V128>(bytes);
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        make_ascii_lowercase_chunks::<portable::Lanes>(bytes);
    }
}

#[inline(always)]
fn make_ascii_lowercase_chunks<V: Vector>(bytes: &mut [u8]) {
    let (a, letters, case) = (V::splat(b'A'), V::splat(26), V::splat(0x20));
    let mut at = 0;
    while bytes.len() - at >= 16 {
        // SAFETY: `at + 16 <= bytes.len()`: the 16 bytes read and written are in `bytes`.
        unsafe {
            let ptr = bytes.as_mut_ptr().add(at);
            let chunk = V::load_unaligned(ptr);
            let upper = chunk.sub(a).lt(letters);
            chunk.or(upper.and(case)).store_unaligned(ptr);
        }
        at += 16;
    }
    bytes[at..].make_ascii_lowercase();
}

/// Finds the leftmost occurrence of any of up to [`MAX_ANCHORS`] byte strings, the earliest
/// given winning at the same start: the start aho-corasick's `packed::Searcher` with
/// `MatchKind::LeftmostFirst` reports, and the same anchor.
#[derive(Debug, Clone)]
pub struct Searcher {
    fingerprint: usize,
    lo: [[u8; 16]; SEARCHER_FINGERPRINT],
    hi: [[u8; 16]; SEARCHER_FINGERPRINT],
    /// The anchors by bucket, each bucket's in the order given; `bucket_ends[b]` is where
    /// bucket `b`'s end.
    entries: Vec<Entry>,
    bucket_ends: [u8; BUCKETS],
    /// The anchors, for those longer than an [`Entry`] holds.
    anchors: Vec<Vec<u8>>,
}

/// An anchor's first 4 bytes (little-endian, zero-padded), to compare with one load.
#[derive(Debug, Clone, Copy)]
struct Entry {
    word: u32,
    mask: u32,
    len: u32,
    id: u32,
}

impl Searcher {
    /// A searcher for `anchors` (their order decides between anchors starting at the same
    /// byte). `None` without anchors, with an empty one, or with more than [`MAX_ANCHORS`].
    pub fn new<A: AsRef<[u8]>>(anchors: impl IntoIterator<Item = A>) -> Option<Searcher> {
        let anchors: Vec<Vec<u8>> = anchors.into_iter().map(|a| a.as_ref().to_vec()).collect();
        if anchors.len() > MAX_ANCHORS {
            return None;
        }
        let fingerprint = anchors
            .iter()
            .map(Vec::len)
            .min()?
            .min(SEARCHER_FINGERPRINT);
        if fingerprint == 0 {
            return None;
        }
        let mut lo = [[0u8; 16]; SEARCHER_FINGERPRINT];
        let mut hi = [[0u8; 16]; SEARCHER_FINGERPRINT];
        let mut members: [Vec<usize>; BUCKETS] = Default::default();
        for (id, anchor) in anchors.iter().enumerate() {
            let bucket = choose_bucket(&lo, &hi, &anchor[..fingerprint], &members);
            members[bucket].push(id);
            for (i, &byte) in anchor[..fingerprint].iter().enumerate() {
                lo[i][usize::from(byte & 0x0f)] |= 1 << bucket;
                hi[i][usize::from(byte >> 4)] |= 1 << bucket;
            }
        }
        let mut entries = Vec::with_capacity(anchors.len());
        let mut bucket_ends = [0u8; BUCKETS];
        for (bucket, ids) in members.iter().enumerate() {
            for &id in ids {
                let anchor = &anchors[id];
                let head = &anchor[..anchor.len().min(4)];
                let mut word = [0u8; 4];
                word[..head.len()].copy_from_slice(head);
                entries.push(Entry {
                    word: u32::from_le_bytes(word),
                    mask: u32::MAX >> (8 * (4 - head.len())),
                    len: anchor.len() as u32,
                    id: id as u32,
                });
            }
            bucket_ends[bucket] = entries.len() as u8;
        }
        Some(Searcher {
            fingerprint,
            lo,
            hi,
            entries,
            bucket_ends,
            anchors,
        })
    }

    /// The leftmost occurrence of an anchor inside `haystack[span]` (of those starting there,
    /// the first anchor given). `None` too for a span outside the haystack.
    pub fn find_in(&self, haystack: &[u8], span: Span) -> Option<Match> {
        let haystack = haystack.get(..span.end)?;
        let check = |at: usize, buckets: u8| self.check(haystack, at, buckets);
        let (start, end) = (span.start, span.end);
        match self.fingerprint {
            1 => find::<_, 1>(&self.lo, &self.hi, haystack, start, end, check),
            2 => find::<_, 2>(&self.lo, &self.hi, haystack, start, end, check),
            _ => find::<_, 3>(&self.lo, &self.hi, haystack, start, end, check),
        }
    }

    /// The first anchor (in the order given) of `buckets` at `at`.
    #[inline(always)]
    fn check(&self, haystack: &[u8], at: usize, mut buckets: u8) -> Option<Match> {
        let rest = haystack.len() - at;
        let word = if rest >= 4 {
            u32::from_le_bytes([
                haystack[at],
                haystack[at + 1],
                haystack[at + 2],
                haystack[at + 3],
            ])
        } else {
            let mut word = [0u8; 4];
            word[..rest].copy_from_slice(&haystack[at..]);
            u32::from_le_bytes(word)
        };
        let entries: &[Entry] = &self.entries;
        let mut best: Option<Entry> = None;
        while buckets != 0 {
            let bucket = buckets.trailing_zeros() as usize;
            buckets &= buckets - 1;
            let first = if bucket == 0 {
                0
            } else {
                usize::from(self.bucket_ends[bucket - 1])
            };
            let last = usize::from(self.bucket_ends[bucket]);
            for &entry in entries.get(first..last).unwrap_or_default() {
                if best.is_some_and(|best| best.id < entry.id) {
                    break;
                }
                if word & entry.mask == entry.word
                    && entry.len as usize <= rest
                    && (entry.len <= 4
                        || haystack[at..].starts_with(&self.anchors[entry.id as usize]))
                {
                    best = Some(entry);
                    break;
                }
            }
        }
        let best = best?;
        Some(Match::new(
            PatternID::must(best.id as usize),
            at..at + best.len as usize,
        ))
    }
}

/// The bucket for an anchor with `fingerprint`: the one whose tables it widens least. A
/// bucket matches every combination of the nibbles its anchors have at each position, so
/// anchors alike share one; the count of byte strings a bucket matches stands for how often
/// it fires.
fn choose_bucket<const N: usize>(
    lo: &[[u8; 16]; N],
    hi: &[[u8; 16]; N],
    fingerprint: &[u8],
    members: &[Vec<usize>; BUCKETS],
) -> usize {
    let matched = |bucket: usize, extra: Option<&[u8]>| -> u32 {
        let mut product = 1;
        for i in 0..fingerprint.len() {
            let count = |table: &[u8; 16], nibble: u8| {
                let mut set: u16 = 0;
                for (n, &buckets) in table.iter().enumerate() {
                    set |= u16::from(buckets >> bucket & 1) << n;
                }
                if extra.is_some() {
                    set |= 1 << nibble;
                }
                set.count_ones()
            };
            let byte = extra.map_or(0, |e| e[i]);
            product *= count(&lo[i], byte & 0x0f) * count(&hi[i], byte >> 4);
        }
        product
    };
    (0..BUCKETS)
        .min_by_key(|&b| {
            let before = if members[b].is_empty() {
                0
            } else {
                matched(b, None)
            };
            (matched(b, Some(fingerprint)) - before, members[b].len(), b)
        })
        .unwrap_or(0)
}

/// The 16-lane byte vector operations of [`find`].
trait Vector: Copy {
    /// # Safety
    /// `ptr` must be valid for reading 16 bytes.
    unsafe fn load_unaligned(ptr: *const u8) -> Self;
    fn splat(byte: u8) -> Self;
    fn from_bytes(bytes: [u8; 16]) -> Self;
    fn to_bytes(self) -> [u8; 16];
    /// # Safety
    /// `ptr` must be valid for writing 16 bytes.
    unsafe fn store_unaligned(self, ptr: *mut u8);
    fn and(self, other: Self) -> Self;
    fn or(self, other: Self) -> Self;
    /// Lane-wise wrapping subtraction.
    fn sub(self, other: Self) -> Self;
    /// All ones in the lanes below `other`'s (unsigned), zero elsewhere.
    fn lt(self, other: Self) -> Self;
    /// Shifted right by 4 bits as 16-bit lanes: each byte's high nibble comes down, with the
    /// next byte's low nibble above it (the caller masks it off).
    fn shr4(self) -> Self;
    /// `table[index]` in each lane; `index`'s lanes are below 16.
    fn lookup(table: Self, index: Self) -> Self;
    /// `prev`'s last `N` lanes (1 to 3), then `cur`'s first `16 - N`.
    fn shift_in<const N: usize>(prev: Self, cur: Self) -> Self;
    /// Bit `k` set where lane `k` is not zero.
    fn nonzero_lanes(self) -> u16;
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use core::arch::wasm32::*;

    use super::Vector;

    #[derive(Clone, Copy)]
    pub struct V128(v128);

    impl Vector for V128 {
        #[inline(always)]
        unsafe fn load_unaligned(ptr: *const u8) -> Self {
            // SAFETY: the caller guarantees 16 readable bytes; `v128.load` takes any alignment.
            V128(unsafe { v128_load(ptr.cast::<v128>()) })
        }

        #[inline(always)]
        fn splat(byte: u8) -> Self {
            V128(u8x16_splat(byte))
        }

        #[inline(always)]
        fn from_bytes(bytes: [u8; 16]) -> Self {
            // SAFETY: `bytes` is 16 readable bytes.
            unsafe { Self::load_unaligned(bytes.as_ptr()) }
        }

        #[inline(always)]
        fn to_bytes(self) -> [u8; 16] {
            let mut bytes = [0u8; 16];
            // SAFETY: `bytes` is 16 writable bytes.
            unsafe { self.store_unaligned(bytes.as_mut_ptr()) };
            bytes
        }

        #[inline(always)]
        unsafe fn store_unaligned(self, ptr: *mut u8) {
            // SAFETY: the caller guarantees 16 writable bytes; `v128.store` takes any alignment.
            unsafe { v128_store(ptr.cast::<v128>(), self.0) }
        }

        #[inline(always)]
        fn and(self, other: Self) -> Self {
            V128(v128_and(self.0, other.0))
        }

        #[inline(always)]
        fn or(self, other: Self) -> Self {
            V128(v128_or(self.0, other.0))
        }

        #[inline(always)]
        fn sub(self, other: Self) -> Self {
            V128(i8x16_sub(self.0, other.0))
        }

        #[inline(always)]
        fn lt(self, other: Self) -> Self {
            V128(u8x16_lt(self.0, other.0))
        }

        #[inline(always)]
        fn shr4(self) -> Self {
            // 16-bit lanes: one instruction on x86, where a byte shift is emulated.
            V128(u16x8_shr(self.0, 4))
        }

        #[inline(always)]
        fn lookup(table: Self, index: Self) -> Self {
            V128(i8x16_swizzle(table.0, index.0))
        }

        #[inline(always)]
        fn shift_in<const N: usize>(prev: Self, cur: Self) -> Self {
            // The shuffles' lane indexes must be constants: one per `N`.
            V128(match N {
                1 => {
                    i8x16_shuffle::<15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30>(
                        prev.0, cur.0,
                    )
                }
                2 => {
                    i8x16_shuffle::<14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29>(
                        prev.0, cur.0,
                    )
                }
                _ => {
                    i8x16_shuffle::<13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28>(
                        prev.0, cur.0,
                    )
                }
            })
        }

        #[inline(always)]
        fn nonzero_lanes(self) -> u16 {
            // `ne` gives all ones per non-zero lane; `bitmask` takes each lane's top bit.
            u8x16_bitmask(u8x16_ne(self.0, u8x16_splat(0)))
        }
    }
}

/// [`Vector`] on a plain array: what the native unit tests run [`find`] on.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod portable {
    use super::Vector;

    #[derive(Clone, Copy)]
    pub struct Lanes([u8; 16]);

    impl Vector for Lanes {
        unsafe fn load_unaligned(ptr: *const u8) -> Self {
            // SAFETY: the caller guarantees 16 readable bytes.
            Lanes(unsafe { ptr.cast::<[u8; 16]>().read_unaligned() })
        }

        fn splat(byte: u8) -> Self {
            Lanes([byte; 16])
        }

        fn from_bytes(bytes: [u8; 16]) -> Self {
            Lanes(bytes)
        }

        fn to_bytes(self) -> [u8; 16] {
            self.0
        }

        unsafe fn store_unaligned(self, ptr: *mut u8) {
            // SAFETY: the caller guarantees 16 writable bytes.
            unsafe { ptr.cast::<[u8; 16]>().write_unaligned(self.0) }
        }

        fn and(self, other: Self) -> Self {
            Lanes(std::array::from_fn(|k| self.0[k] & other.0[k]))
        }

        fn or(self, other: Self) -> Self {
            Lanes(std::array::from_fn(|k| self.0[k] | other.0[k]))
        }

        fn sub(self, other: Self) -> Self {
            Lanes(std::array::from_fn(|k| self.0[k].wrapping_sub(other.0[k])))
        }

        fn lt(self, other: Self) -> Self {
            Lanes(std::array::from_fn(|k| {
                if self.0[k] < other.0[k] {
                    0xff
                } else {
                    0
                }
            }))
        }

        fn shr4(self) -> Self {
            Lanes(std::array::from_fn(|k| {
                let pair = u16::from_le_bytes([self.0[k & !1], self.0[k | 1]]) >> 4;
                pair.to_le_bytes()[k & 1]
            }))
        }

        fn lookup(table: Self, index: Self) -> Self {
            // Like `i8x16.swizzle`: an index past the table gives 0.
            Lanes(std::array::from_fn(|k| {
                table.0.get(usize::from(index.0[k])).copied().unwrap_or(0)
            }))
        }

        fn shift_in<const N: usize>(prev: Self, cur: Self) -> Self {
            Lanes(std::array::from_fn(|k| {
                if k < N {
                    prev.0[16 - N + k]
                } else {
                    cur.0[k - N]
                }
            }))
        }

        fn nonzero_lanes(self) -> u16 {
            (0..16).fold(0, |bits, k| bits | u16::from(self.0[k] != 0) << k)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The leftmost-first match the naive way: every start, every anchor in order.
    fn naive(anchors: &[Vec<u8>], haystack: &[u8], start: usize) -> Option<(usize, usize)> {
        (start..=haystack.len()).find_map(|at| {
            anchors
                .iter()
                .position(|a| haystack[at..].starts_with(a))
                .map(|id| (at, id))
        })
    }

    /// xorshift64*: deterministic cases without a dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Random anchor sets and haystacks over small alphabets (so anchors occur, and buckets
    /// share nibbles), some anchors planted; every start and a few ends checked against the
    /// naive search.
    #[test]
    fn searcher_finds_what_the_naive_search_finds() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..3000 {
            let alphabet: &[u8] = match case % 4 {
                0 => b"ab",
                1 => b"abcdefgh",
                2 => b"aAqQ\x00\xff\x10\x01 \n",
                _ => b"abcdefghijklmnopqrstuvwxyz\"{}:, ",
            };
            let byte = |rng: &mut Rng| alphabet[rng.below(alphabet.len())];
            let count = 1 + rng.below(MAX_ANCHORS);
            let longest = if case % 3 == 0 { 3 } else { 7 };
            let anchors: Vec<Vec<u8>> = (0..count)
                .map(|_| {
                    let len = 1 + rng.below(longest);
                    (0..len).map(|_| byte(&mut rng)).collect()
                })
                .collect();
            let len = rng.below(120);
            let mut haystack: Vec<u8> = (0..len).map(|_| byte(&mut rng)).collect();
            for _ in 0..rng.below(4) {
                let anchor = &anchors[rng.below(count)];
                if anchor.len() <= haystack.len() {
                    let at = rng.below(haystack.len() - anchor.len() + 1);
                    haystack[at..at + anchor.len()].copy_from_slice(anchor);
                }
            }
            let searcher = Searcher::new(&anchors).expect("non-empty anchors");
            for start in 0..=haystack.len() {
                let end = if start % 5 == 0 {
                    start + rng.below(haystack.len() - start + 1)
                } else {
                    haystack.len()
                };
                let want = naive(&anchors, &haystack[..end], start);
                let got = searcher
                    .find_in(&haystack, Span::from(start..end))
                    .map(|m| (m.start(), m.pattern().as_usize()));
                assert_eq!(
                    got, want,
                    "case {case} {start}..{end}: {anchors:?} in {haystack:?}"
                );
            }
        }
    }

    /// [`find`] with random tables: it reports the first position whose fingerprint matches
    /// (by a byte-at-a-time reading of the tables), for every fingerprint width.
    #[test]
    fn find_reports_the_first_fingerprint_match() {
        fn check_width<const F: usize>(rng: &mut Rng) {
            let mut lo = [[0u8; 16]; F];
            let mut hi = [[0u8; 16]; F];
            for table in lo.iter_mut().chain(hi.iter_mut()) {
                for entry in table.iter_mut() {
                    // Sparse, so matches are neither everywhere nor nowhere.
                    *entry = (rng.next() & rng.next() & rng.next()) as u8;
                }
            }
            let haystack: Vec<u8> = (0..rng.below(100)).map(|_| rng.next() as u8).collect();
            let buckets_at = |at: usize| {
                (0..F).fold(0xffu8, |b, i| {
                    let byte = haystack[at + i];
                    b & lo[i][usize::from(byte & 15)] & hi[i][usize::from(byte >> 4)]
                })
            };
            for start in 0..=haystack.len() {
                // Also a check that refuses some candidates, as anchor comparisons do.
                let refuse = rng.below(3) == 0;
                let want = (start..(haystack.len() + 1).saturating_sub(F))
                    .find(|&at| buckets_at(at) != 0 && !(refuse && at % 2 == 1))
                    .map(|at| (at, buckets_at(at)));
                let got = find::<_, F>(&lo, &hi, &haystack, start, haystack.len(), |at, b| {
                    (!(refuse && at % 2 == 1)).then_some((at, b))
                });
                assert_eq!(got, want, "width {F} from {start} in {haystack:?}");
            }
        }
        let mut rng = Rng(42);
        for _ in 0..500 {
            check_width::<1>(&mut rng);
            check_width::<2>(&mut rng);
            check_width::<3>(&mut rng);
            check_width::<4>(&mut rng);
        }
    }

    #[test]
    fn lower_cases_like_std() {
        let text: Vec<u8> = (0..=255u8)
            .chain(b"Hello, WORLD: Zz@[`{".iter().copied())
            .collect();
        for len in 0..text.len() {
            let mut folded = text[..len].to_vec();
            make_ascii_lowercase(&mut folded);
            assert_eq!(folded, text[..len].to_ascii_lowercase(), "{len} bytes");
        }
    }

    #[test]
    fn a_match_ends_within_the_span() {
        let searcher = Searcher::new([b"abc".as_slice(), b"cd"]).expect("anchors");
        let text = b"xxabcdxx";
        assert_eq!(searcher.find_in(text, Span::from(0..4)), None);
        let m = searcher.find_in(text, Span::from(0..5)).expect("abc");
        assert_eq!((m.start(), m.end(), m.pattern().as_usize()), (2, 5, 0));
        let m = searcher.find_in(text, Span::from(3..8)).expect("cd");
        assert_eq!((m.start(), m.pattern().as_usize()), (4, 1));
    }

    #[test]
    fn the_first_anchor_given_wins_at_the_same_start() {
        let searcher = Searcher::new([b"abcdefg".as_slice(), b"ab", b"abc"]).expect("anchors");
        let m = searcher
            .find_in(b"--abcdefg", Span::from(0..9))
            .expect("match");
        assert_eq!((m.start(), m.end(), m.pattern().as_usize()), (2, 9, 0));
        let m = searcher
            .find_in(b"--abcdef-", Span::from(0..9))
            .expect("match");
        assert_eq!((m.start(), m.pattern().as_usize()), (2, 1));
    }

    #[test]
    fn refuses_what_it_cannot_search() {
        assert!(Searcher::new(Vec::<Vec<u8>>::new()).is_none());
        assert!(Searcher::new([b"ab".as_slice(), b""]).is_none());
        assert!(Searcher::new((0..=MAX_ANCHORS).map(|i| format!("{i:03}"))).is_none());
        let searcher = Searcher::new((0..MAX_ANCHORS).map(|i| format!("{i:03}"))).expect("64");
        assert_eq!(searcher.find_in(b"abc", Span::from(2..9)), None);
        assert_eq!(
            searcher
                .find_in(b"x063", Span::from(0..4))
                .map(|m| m.start()),
            Some(1)
        );
    }

    /// The anchors the scanner chose for a corpus of Karpenter logs, on such a log: bucketing
    /// keeps candidates (each one compared with its buckets' anchors) to a few per line.
    #[test]
    fn candidates_stay_few_on_log_text() {
        let line = br#"{"level":"info","time":"2024-05-01t10:00:00.000z","logger":"controller","message":"found provisionable pod(s)","commit":"a1b2c3d","controller":"provisioner","pods":"shop/web-0","duration":"12.3ms"}"#;
        let anchors = [
            "ed ", "ing", "not", "ent", " re", "led", "ain", "ali", "nce", "deb", "nod", "rea",
            "on ", "ity", "pul", "no ", "red", "aut", "unt", "st ", "rup", "hou", "sts", "ele",
            "ice", "reg", "cce", "og_", "ogl", "og-", "es ", "ecl", "169", "unk", "kms",
        ];
        let searcher = Searcher::new(anchors).expect("anchors");
        let mut candidates = 0;
        let found = find::<_, 3>(&searcher.lo, &searcher.hi, line, 0, line.len(), |_, _| {
            candidates += 1;
            None::<()>
        });
        assert_eq!(found, None);
        assert!(candidates <= 8, "{candidates} candidates in a line");
    }
}
