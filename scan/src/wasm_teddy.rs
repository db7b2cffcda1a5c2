//! Teddy on WebAssembly SIMD: the search loop of the log scanner's anchor searcher
//! ([`super::scan`]'s `teddy`) in the web page. Without it the page has no fast anchor search
//! (the scanner's Teddy is AVX2, aho-corasick's runs on x86-64 and aarch64 only), and ran the
//! whole text through the automaton.
//!
//! Teddy (from Hyperscan): each anchor is in one of 16 buckets; for each of the first `F`
//! bytes of the anchors (the fingerprint, 1 to 4) tables indexed by a byte's low and high
//! nibble give the buckets having an anchor with that nibble there, buckets 0-7 and 8-15 in
//! two tables (a lane holds 8). 16 bytes of text at a time, `i8x16.swizzle` looks the nibbles
//! up; ANDed across the fingerprint (each byte's result moved up by its distance to the last
//! byte, the previous chunk's lanes coming in), they leave per byte the buckets of the anchors
//! that may start there, the few candidates the caller then checks.
//!
//! The loop is written once over [`Vector`]: WebAssembly's `v128` in the page, a plain
//! 16-byte array natively, so the unit tests run the page's logic against a byte-at-a-time
//! reading of the tables.

/// Nibble tables of one fingerprint byte: `[half][nibble]`, bit `b` of `[h][n]` standing for
/// bucket `8 * h + b`.
pub type NibbleTable = [[u8; 16]; 2];

/// The first `at` in `haystack[start..end]` where some bucket's fingerprint (`F` bytes, 1 to
/// 4) matches and `check(at, buckets)` (the buckets whose fingerprint matches at `at`, bit `b`
/// for bucket `b`) says yes, with what it said. `lo[i]` / `hi[i]` (`i < F`) give the buckets
/// having an anchor whose byte `i` has a given low / high nibble. `check` is asked only where
/// the whole fingerprint fits before `end`.
#[inline(always)]
pub fn find<T, const F: usize>(
    lo: &[NibbleTable],
    hi: &[NibbleTable],
    haystack: &[u8],
    start: usize,
    end: usize,
    check: impl FnMut(usize, u16) -> Option<T>,
) -> Option<T> {
    if start > end || end > haystack.len() || !(1..=4).contains(&F) {
        return None;
    }
    let (lo, hi) = (lo.get(..F)?, hi.get(..F)?);
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        find_chunks::<simd::V128, T, F>(lo, hi, haystack, start, end, check)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        find_chunks::<portable::Lanes, T, F>(lo, hi, haystack, start, end, check)
    }
}

/// One half's tables (buckets 0-7 or 8-15) as vectors, fingerprint bytes past `F` repeating
/// the last (never used).
struct HalfTables<V> {
    lo: [V; 4],
    hi: [V; 4],
}

impl<V: Vector> HalfTables<V> {
    #[inline(always)]
    fn new<const F: usize>(lo: &[NibbleTable], hi: &[NibbleTable], half: usize) -> Self {
        HalfTables {
            lo: [
                table::<V, F>(lo, 0, half),
                table::<V, F>(lo, 1, half),
                table::<V, F>(lo, 2, half),
                table::<V, F>(lo, 3, half),
            ],
            hi: [
                table::<V, F>(hi, 0, half),
                table::<V, F>(hi, 1, half),
                table::<V, F>(hi, 2, half),
                table::<V, F>(hi, 3, half),
            ],
        }
    }

    /// The half's buckets having an anchor whose byte `i` could be each of the bytes whose
    /// nibbles are `low` and `high`.
    #[inline(always)]
    fn byte(&self, i: usize, low: V, high: V) -> V {
        V::lookup(self.lo[i], low).and(V::lookup(self.hi[i], high))
    }

    /// The half's candidates in a chunk whose nibbles are `low` and `high`: lane `k` holds the
    /// buckets whose fingerprint ends at byte `k` (starts `F - 1` bytes earlier). `prev` holds
    /// the previous chunk's lookups of fingerprint bytes 0 to `F - 2`, and comes back with
    /// this chunk's.
    #[inline(always)]
    fn candidates<const F: usize>(&self, low: V, high: V, prev: [V; 3]) -> (V, [V; 3]) {
        let in0 = self.byte(0, low, high);
        match F {
            1 => (in0, prev),
            2 => {
                let in1 = self.byte(1, low, high);
                (
                    V::shift_in::<1>(prev[0], in0).and(in1),
                    [in0, prev[1], prev[2]],
                )
            }
            3 => {
                let (in1, in2) = (self.byte(1, low, high), self.byte(2, low, high));
                let found = V::shift_in::<2>(prev[0], in0)
                    .and(V::shift_in::<1>(prev[1], in1))
                    .and(in2);
                (found, [in0, in1, prev[2]])
            }
            _ => {
                let in1 = self.byte(1, low, high);
                let (in2, in3) = (self.byte(2, low, high), self.byte(3, low, high));
                let found = V::shift_in::<3>(prev[0], in0)
                    .and(V::shift_in::<2>(prev[1], in1))
                    .and(V::shift_in::<1>(prev[2], in2))
                    .and(in3);
                (found, [in0, in1, in2])
            }
        }
    }

    /// The half's candidates starting at the bytes of `nibbles[0]`, `nibbles[i]` holding the
    /// nibbles of the 16 bytes `i` further on (lane `k`: the start `k`).
    #[inline(always)]
    fn candidates_at<const F: usize>(&self, nibbles: &[(V, V); 4]) -> V {
        let mut found = self.byte(0, nibbles[0].0, nibbles[0].1);
        if F > 1 {
            found = found.and(self.byte(1, nibbles[1].0, nibbles[1].1));
        }
        if F > 2 {
            found = found.and(self.byte(2, nibbles[2].0, nibbles[2].1));
        }
        if F > 3 {
            found = found.and(self.byte(3, nibbles[3].0, nibbles[3].1));
        }
        found
    }
}

/// Byte `i`'s (the last for `i >= F`) table of `half`, as a vector.
#[inline(always)]
fn table<V: Vector, const F: usize>(tables: &[NibbleTable], i: usize, half: usize) -> V {
    V::from_bytes(tables[i.min(F - 1)][half])
}

/// The low and high nibbles of the 16 bytes at `at`.
///
/// # Safety
/// `at + 16 <= haystack.len()`.
#[inline(always)]
unsafe fn nibbles_at<V: Vector>(haystack: &[u8], at: usize) -> (V, V) {
    // SAFETY: the caller guarantees the 16 bytes read are in `haystack`.
    let chunk = unsafe { V::load_unaligned(haystack.as_ptr().add(at)) };
    let nibble = V::splat(0x0f);
    (chunk.and(nibble), chunk.shr4().and(nibble))
}

/// Asks `check` about the starts `at + k - lag` for the lanes `k` set in `lanes` (none below
/// `lag`), in order, the buckets in `first` (0-7) and `second` (8-15).
#[inline(always)]
fn check_lanes<V: Vector, T>(
    mut lanes: u16,
    first: V,
    second: V,
    at: usize,
    lag: usize,
    check: &mut impl FnMut(usize, u16) -> Option<T>,
) -> Option<T> {
    if lanes == 0 {
        return None;
    }
    let (first, second) = (first.to_bytes(), second.to_bytes());
    while lanes != 0 {
        let lane = lanes.trailing_zeros() as usize;
        lanes &= lanes - 1;
        if let Some(found) = check(
            at + lane - lag,
            u16::from(first[lane]) | u16::from(second[lane]) << 8,
        ) {
            return Some(found);
        }
    }
    None
}

/// [`find`] 16 bytes at a time; the last starts (fewer than 16) in one more step of 16 starts
/// ending at the haystack's end, the lanes already seen or past the span ignored.
#[inline(always)]
fn find_chunks<V: Vector, T, const F: usize>(
    lo: &[NibbleTable],
    hi: &[NibbleTable],
    haystack: &[u8],
    start: usize,
    end: usize,
    mut check: impl FnMut(usize, u16) -> Option<T>,
) -> Option<T> {
    let (first, second) = (
        HalfTables::<V>::new::<F>(lo, hi, 0),
        HalfTables::<V>::new::<F>(lo, hi, 1),
    );
    // Nothing starts before `start`: the first chunk's "previous chunk" matches nothing.
    let (mut prev_first, mut prev_second) = ([V::splat(0); 3], [V::splat(0); 3]);
    let mut at = start;
    while end - at >= 16 {
        // SAFETY: `at + 16 <= end <= haystack.len()`.
        let (low, high) = unsafe { nibbles_at::<V>(haystack, at) };
        let (found_first, next) = first.candidates::<F>(low, high, prev_first);
        prev_first = next;
        let (found_second, next) = second.candidates::<F>(low, high, prev_second);
        prev_second = next;
        let lanes = found_first.or(found_second).nonzero_lanes();
        // The first chunk's lanes below `F - 1` are empty (see `prev_first`), so no start is
        // before `start`.
        if let Some(found) = check_lanes(lanes, found_first, found_second, at, F - 1, &mut check) {
            return Some(found);
        }
        at += 16;
    }
    // The chunks covered the starts before `at + 1 - F`.
    let from = if at == start { start } else { at + 1 - F };
    let last = end.checked_sub(F)?;
    if from > last {
        return None;
    }
    if haystack.len() < 15 + F {
        // Too short for a step: a byte at a time.
        return (from..=last).find_map(|at| {
            let buckets = buckets_at::<F>(lo, hi, &haystack[at..at + F]);
            if buckets == 0 {
                return None;
            }
            check(at, buckets)
        });
    }
    // Lane `k` for the start `base + k`: from `from`, or as far back as the loads stay in the
    // haystack; the fewer than 16 starts left all fit.
    let base = from.min(haystack.len() - 15 - F);
    let mut nibbles = [(V::splat(0), V::splat(0)); 4];
    for (i, nibbles) in nibbles.iter_mut().enumerate().take(F) {
        // SAFETY: `base + i + 16 <= base + F - 1 + 16 <= haystack.len()`.
        *nibbles = unsafe { nibbles_at::<V>(haystack, base + i) };
    }
    let (found_first, found_second) = (
        first.candidates_at::<F>(&nibbles),
        second.candidates_at::<F>(&nibbles),
    );
    let in_span = (u32::MAX << (from - base)) & !(u32::MAX << (last - base + 1));
    let lanes = found_first.or(found_second).nonzero_lanes() & in_span as u16;
    check_lanes(lanes, found_first, found_second, base, 0, &mut check)
}

/// The buckets whose fingerprint matches `bytes` (`F` of them), from the tables a byte at a
/// time.
#[inline(always)]
fn buckets_at<const F: usize>(lo: &[NibbleTable], hi: &[NibbleTable], bytes: &[u8]) -> u16 {
    let mut buckets = u16::MAX;
    for i in 0..F {
        let (l, h) = (usize::from(bytes[i] & 0x0f), usize::from(bytes[i] >> 4));
        buckets &= u16::from(lo[i][0][l] & hi[i][0][h]) | u16::from(lo[i][1][l] & hi[i][1][h]) << 8;
    }
    buckets
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

/// The 16-lane byte vector operations of [`find`] and [`make_ascii_lowercase`].
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

/// xorshift64*: deterministic random test cases without a dependency (here and in the
/// browser tests).
#[doc(hidden)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Checks [`find`] against a byte-at-a-time reading of the tables, panicking on the first
/// difference: random sparse tables (so candidates are neither everywhere nor nowhere) and
/// texts, every start and some ends, a check refusing some candidates, every fingerprint width.
/// Shared by this module's unit test (the portable loop) and the browser test (the SIMD loop
/// in Chrome).
#[doc(hidden)]
pub fn assert_find_matches_naive(seed: u64, rounds: usize) {
    fn width<const F: usize>(rng: &mut Rng) {
        let mut table = || -> NibbleTable {
            std::array::from_fn(|_| {
                std::array::from_fn(|_| (rng.next_u64() & rng.next_u64() & rng.next_u64()) as u8)
            })
        };
        let lo: Vec<NibbleTable> = (0..F).map(|_| table()).collect();
        let hi: Vec<NibbleTable> = (0..F).map(|_| table()).collect();
        let haystack: Vec<u8> = (0..rng.below(100)).map(|_| rng.next_u64() as u8).collect();
        let naive_buckets = |at: usize| {
            (0..F).fold(u16::MAX, |set, i| {
                let b = haystack[at + i];
                let half = |h: usize| {
                    u16::from(lo[i][h][usize::from(b & 15)] & hi[i][h][usize::from(b >> 4)])
                };
                set & (half(0) | half(1) << 8)
            })
        };
        for start in 0..=haystack.len() {
            let end = if start % 3 == 0 {
                start + rng.below(haystack.len() - start + 1)
            } else {
                haystack.len()
            };
            // Candidates are many: a check refusing the first ones (and maybe every other one)
            // makes the search go on across chunks.
            let (skip, refuse) = (start + rng.below(end - start + 1), rng.below(3) == 0);
            let accept = |at: usize| at >= skip && !(refuse && at % 2 == 1);
            let want = (start..(end + 1).saturating_sub(F))
                .find(|&at| naive_buckets(at) != 0 && accept(at))
                .map(|at| (at, naive_buckets(at)));
            let got = find::<_, F>(&lo, &hi, &haystack, start, end, |at, buckets| {
                accept(at).then_some((at, buckets))
            });
            assert_eq!(got, want, "width {F}, {start}..{end} of {haystack:?}");
        }
    }
    let mut rng = Rng(seed);
    for _ in 0..rounds {
        width::<1>(&mut rng);
        width::<2>(&mut rng);
        width::<3>(&mut rng);
        width::<4>(&mut rng);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_reports_the_first_accepted_fingerprint_match() {
        assert_find_matches_naive(42, 400);
    }

    #[test]
    fn refuses_spans_and_tables_it_cannot_search() {
        let tables = [[[0xffu8; 16]; 2]; 2];
        let any = |at: usize, _| Some(at);
        assert_eq!(find::<_, 2>(&tables, &tables, b"abcd", 0, 4, any), Some(0));
        assert_eq!(find::<_, 2>(&tables, &tables, b"abcd", 3, 9, any), None);
        assert_eq!(find::<_, 2>(&tables, &tables, b"abcd", 3, 2, any), None);
        assert_eq!(find::<_, 3>(&tables, &tables, b"abcd", 0, 4, any), None);
        assert_eq!(find::<_, 2>(&tables, &tables, b"abcd", 3, 4, any), None);
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
}
