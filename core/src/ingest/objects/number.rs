//! Decimal numbers read exactly as `str::parse::<f64>` reads them, without the standard
//! library's float parser: dec2flt is 3 KB of code and a 10 KB table of powers of five in the
//! wasm module, for a handful of quantities. Values that fit are converted with one exact
//! float operation (Clinger's fast path); the rest with a small big-integer division, slow
//! but only ever reached by numbers with many digits or large exponents.

/// A number as `str::parse::<f64>` accepts it: `-`/`+`, digits with at most one point and at
/// least one digit, an optional exponent (`e`/`E`, a sign, digits); or `inf`, `infinity`,
/// `nan` in any case.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Read<'t> {
    Finite {
        negative: bool,
        /// The digits before and after the point.
        int: &'t [u8],
        frac: &'t [u8],
        /// The written exponent, saturated as dec2flt saturates it (so that a number with a
        /// huge exponent reads to the same value).
        exponent: i64,
    },
    Infinity {
        negative: bool,
    },
    NaN {
        negative: bool,
    },
}

fn read(text: &str) -> Option<Read<'_>> {
    let bytes = text.as_bytes();
    let (negative, body) = match bytes.first() {
        Some(b'-') => (true, &bytes[1..]),
        Some(b'+') => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    let digits_end = |s: &[u8]| {
        s.iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(s.len())
    };
    let int_len = digits_end(body);
    let (int, mut rest) = body.split_at(int_len);
    let mut frac: &[u8] = &[];
    if let Some(after_point) = rest.strip_prefix(b".") {
        let frac_len = digits_end(after_point);
        (frac, rest) = after_point.split_at(frac_len);
    }
    if int.is_empty() && frac.is_empty() {
        let is = |word: &[u8]| body.eq_ignore_ascii_case(word);
        return if is(b"inf") || is(b"infinity") {
            Some(Read::Infinity { negative })
        } else if is(b"nan") {
            Some(Read::NaN { negative })
        } else {
            None
        };
    }
    let mut exponent = 0i64;
    if let Some(after_e) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let (exponent_negative, digits) = match after_e.first() {
            Some(b'-') => (true, &after_e[1..]),
            Some(b'+') => (false, &after_e[1..]),
            _ => (false, after_e),
        };
        let len = digits_end(digits);
        if len == 0 {
            return None;
        }
        for &d in &digits[..len] {
            // dec2flt's saturation, digit for digit.
            if exponent < 0x10000 {
                exponent = 10 * exponent + i64::from(d - b'0');
            }
        }
        if exponent_negative {
            exponent = -exponent;
        }
        rest = &digits[len..];
    }
    rest.is_empty().then_some(Read::Finite {
        negative,
        int,
        frac,
        exponent,
    })
}

/// Whether `str::parse::<f64>` accepts `text`.
pub fn is_f64(text: &str) -> bool {
    read(text).is_some()
}

/// `text.parse::<f64>().ok()`, bit for bit.
pub fn parse_f64(text: &str) -> Option<f64> {
    Some(match read(text)? {
        Read::NaN { negative } => sign(f64::NAN, negative),
        Read::Infinity { negative } => sign(f64::INFINITY, negative),
        Read::Finite {
            negative,
            int,
            frac,
            exponent,
        } => sign(finite(int, frac, exponent), negative),
    })
}

fn sign(value: f64, negative: bool) -> f64 {
    if negative {
        -value
    } else {
        value
    }
}

/// More significant digits than any number halfway between two floats has (767): cutting
/// the digits after these and putting a `1` in their place never crosses a rounding boundary.
const MAX_DIGITS: usize = 800;

/// The nearest float (ties to even) to the digits `int`.`frac` times ten to `exponent`.
fn finite(int: &[u8], frac: &[u8], exponent: i64) -> f64 {
    // The significant digits, without leading and trailing zeros, and the power of ten that
    // scales them as an integer.
    let all = int.iter().chain(frac);
    let leading = all.clone().take_while(|&&d| d == b'0').count();
    let total = int.len() + frac.len();
    let trailing = all.clone().rev().take_while(|&&d| d == b'0').count();
    if leading == total {
        return 0.0;
    }
    let count = total - leading - trailing;
    let mut scale = exponent - frac.len() as i64 + trailing as i64;
    let digits = all.skip(leading).take(count.min(MAX_DIGITS));
    // value = digits × 10^scale, and 10^(count - 1 + scale) <= value < 10^(count + scale).
    let magnitude = count as i64 + scale;
    if magnitude > 310 {
        return f64::INFINITY;
    }
    if magnitude < -325 {
        return 0.0;
    }
    if count <= 15 && (-22..=22).contains(&scale) {
        // Both exact in a float (under 2^53 and 10^22), so one rounding: the right one.
        let mantissa = digits.fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')) as f64;
        let power = (0..scale.abs()).fold(1.0f64, |p, _| p * 10.0);
        return if scale < 0 {
            mantissa / power
        } else {
            mantissa * power
        };
    }
    let mut numerator = Big::zero();
    for &d in digits {
        numerator.mul_add(10, u32::from(d - b'0'));
    }
    if count > MAX_DIGITS {
        // Nonzero digits were cut (the last digit is not a zero): a `1` past the kept ones.
        numerator.mul_add(10, 1);
        scale += count as i64 - MAX_DIGITS as i64 - 1;
    }
    let mut denominator = Big::from(1);
    let (up, down) = if scale >= 0 {
        (&mut numerator, scale)
    } else {
        (&mut denominator, -scale)
    };
    for _ in 0..down {
        up.mul_add(10, 0);
    }
    // quotient = floor(numerator × 2^shift / denominator), 2^55 <= quotient < 2^57.
    let shift = 56 - numerator.bits() as i64 + denominator.bits() as i64;
    if shift >= 0 {
        numerator.shl(shift as usize);
    } else {
        denominator.shl(-shift as usize);
    }
    let mut divisor = denominator;
    divisor.shl(56);
    let mut quotient = 0u64;
    for bit in (0..57).rev() {
        if numerator.at_least(&divisor) {
            numerator.sub(&divisor);
            quotient |= 1 << bit;
        }
        divisor.shr1();
    }
    round(quotient, -shift, !numerator.is_zero())
}

/// The nearest float to (`quotient` plus a little when `sticky`) × 2^`power`.
fn round(quotient: u64, power: i64, sticky: bool) -> f64 {
    let top = 63 - i64::from(quotient.leading_zeros()) + power;
    // The exponent of the float's last bit: 53 bits below the top, or the subnormals' fixed one.
    let mut last = (top - 52).max(-1074);
    let dropped = last - power;
    if dropped >= 64 {
        return 0.0;
    }
    let dropped = dropped as u32;
    let mut mantissa = quotient >> dropped;
    let rest = quotient & ((1u64 << dropped) - 1);
    let half = 1u64 << (dropped - 1);
    if rest > half || (rest == half && (sticky || mantissa & 1 == 1)) {
        mantissa += 1;
        if mantissa == 1 << 53 {
            mantissa >>= 1;
            last += 1;
        }
    }
    if mantissa < 1 << 52 {
        // A subnormal (`last` is -1074): the mantissa is the bit pattern.
        return f64::from_bits(mantissa);
    }
    let biased = last + 1075;
    if biased >= 2047 {
        return f64::INFINITY;
    }
    f64::from_bits(((biased as u64) << 52) | (mantissa & ((1 << 52) - 1)))
}

/// A non-negative integer, 32-bit limbs, least significant first, no zero limbs on top.
#[derive(Debug, Clone)]
struct Big(Vec<u32>);

impl Big {
    fn zero() -> Big {
        Big(Vec::new())
    }

    fn from(n: u32) -> Big {
        let mut big = Big::zero();
        big.mul_add(1, n);
        big
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    /// self = self × `factor` + `add`.
    fn mul_add(&mut self, factor: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.0 {
            let v = u64::from(*limb) * u64::from(factor) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }

    fn bits(&self) -> usize {
        match self.0.last() {
            Some(top) => self.0.len() * 32 - top.leading_zeros() as usize,
            None => 0,
        }
    }

    fn shl(&mut self, bits: usize) {
        if self.is_zero() {
            return;
        }
        let (limbs, bits) = (bits / 32, bits % 32);
        if bits != 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let v = *limb;
                *limb = (v << bits) | carry;
                carry = v >> (32 - bits);
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        self.0.splice(0..0, std::iter::repeat_n(0, limbs));
    }

    fn shr1(&mut self) {
        let mut carry = 0u32;
        for limb in self.0.iter_mut().rev() {
            let v = *limb;
            *limb = (v >> 1) | carry;
            carry = v << 31;
        }
        self.trim();
    }

    fn at_least(&self, other: &Big) -> bool {
        if self.0.len() != other.0.len() {
            return self.0.len() > other.0.len();
        }
        self.0.iter().rev().cmp(other.0.iter().rev()) != std::cmp::Ordering::Less
    }

    /// self = self - `other`, where self >= `other`.
    fn sub(&mut self, other: &Big) {
        let mut borrow = false;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let (v, b1) = limb.overflowing_sub(other.0.get(i).copied().unwrap_or(0));
            let (v, b2) = v.overflowing_sub(u32::from(borrow));
            *limb = v;
            borrow = b1 || b2;
        }
        self.trim();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn same(text: &str) {
        let expected = text.parse::<f64>().ok();
        let got = parse_f64(text);
        assert_eq!(
            got.map(f64::to_bits),
            expected.map(f64::to_bits),
            "{text:?}: {got:?} vs {expected:?}"
        );
        assert_eq!(is_f64(text), expected.is_some(), "{text:?}");
    }

    #[test]
    fn table_of_edge_cases_reads_as_str_parse() {
        let cases = [
            "", "+", "-", ".", "e", "e5", "1e", "1e+", "1e-", "+.e1", "1.5", "-1.5", "+1.5", "1.",
            ".5", "-.5", "1..5", "1.5.", "0", "-0", "+0", "0.0", "-0.0", "00000", "0e999999",
            "1e308", "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
            "1.797693134862315807e308", "1.7976931348623157081e308", "1e309", "-1e309",
            "2.2250738585072014e-308", "2.2250738585072011e-308", "2.2250738585072012e-308",
            "4.9406564584124654e-324", "5e-324", "2.4703282292062327e-324",
            "2.4703282292062328e-324", "2.4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818081799618989828234772285886546332835517796989819938739800539093906315035659515570226392290858392449105184435931802849936536152500319370457678249219365623669863658480757001585769269903706311928279558551332927834338409351978015531246597263579574622766465272827220056374006485499977096599470454020828166226237857393450736339007967761930577506740176324673600968951340535537458516661134223766678604162159680461914467291840300530057530849048765391711386591646239524912623653881879636239373280423891018672348497668235089863388587925628302755995657524455507255189313690836254779186948667994968324049705821028513185451396213837722826145437693412532098591327667236328125e-324",
            "1e-400", "1e-325", "1e-324", "3e-324", "inf", "-inf", "+inf", "INF", "Infinity",
            "-iNfInItY", "nan", "NaN", "-nan", "+NAN", "infinit", "nana", "in", " 1", "1 ",
            "1_000", "0x10", "1e+5", "1E-5", "1e0005", "9007199254740993", "9007199254740992.5",
            "123456789012345678901234567890", "0.1", "0.2", "0.3", "3.0", "2.5e-3", "1930",
            "29500", "1e22", "1e23", "123456789012345e22", "123456789012345e-22", "1e-22",
            "1e-23", "8.98846567431158e307", "1e65535", "1e65536", "1e655360", "1e-65536",
            "0.00000000000000000000000000000000000000000000001e46",
        ];
        for case in cases {
            same(case);
        }
        let zeros = "0".repeat(70_000);
        same(&format!("0.{zeros}1e70000"));
        same(&format!("0.{zeros}1e700000"));
        same(&format!("1{zeros}e-70000"));
        same(&format!("1{zeros}e-700000"));
        same(&format!("{}e-1000", "7".repeat(1200)));
        same(&format!("{}e-100", "3".repeat(1200)));
        same(&format!("0.{}", "9".repeat(900)));
    }

    #[test]
    fn halfway_points_read_as_str_parse() {
        for bits in [
            1u64,
            2,
            (1 << 52) - 1,
            1 << 52,
            (1 << 52) + 1,
            0x3FF0_0000_0000_0000,
            0x3FF0_0000_0000_0001,
            0x4340_0000_0000_0000,
            0x7FEF_FFFF_FFFF_FFFE,
            0x3E3A_C23E_4BB7_A0C1,
            0x0123_4567_89AB_CDEF,
        ] {
            for x in [f64::from_bits(bits), f64::from_bits(bits + 1)] {
                same(&format!("{x:e}"));
                same(&format!("{x:.40e}"));
            }
            around_midpoint(bits);
        }
        // Above the largest float: the midpoint to "infinity" rounds up (to even).
        around_midpoint(0x7FEF_FFFF_FFFF_FFFF);
    }

    /// The exact decimal of the point halfway between the float `bits` and the next one, and
    /// numbers just below and above it.
    fn around_midpoint(bits: u64) {
        let exponent = ((bits >> 52) & 0x7FF) as i64;
        let fraction = bits & ((1 << 52) - 1);
        let (mantissa, power) = if exponent == 0 {
            (fraction, -1074)
        } else {
            (fraction | 1 << 52, exponent - 1075)
        };
        // (2 × mantissa + 1) × 2^(power - 1) = digits × 10^-k.
        let m = 2 * mantissa + 1;
        let mut n = Big::from((m >> 32) as u32);
        n.shl(32);
        add(&mut n, &Big::from(m as u32));
        let p = power - 1;
        let mut k = 0;
        if p >= 0 {
            n.shl(p as usize);
        } else {
            for _ in 0..-p {
                n.mul_add(5, 0);
            }
            k = -p;
        }
        let digits = decimal(&n);
        same(&format!("{digits}e-{k}"));
        same(&format!("{digits}1e-{}", k + 1));
        same(&format!("{digits}000000000000000000000000001e-{}", k + 27));
        let (head, last) = digits.split_at(digits.len() - 1);
        if last != "0" {
            let below = (last.as_bytes()[0] - 1) as char;
            same(&format!("{head}{below}e-{k}"));
            same(&format!(
                "{head}{below}999999999999999999999999999e-{}",
                k + 27
            ));
        }
    }

    fn add(a: &mut Big, b: &Big) {
        let mut carry = 0u64;
        for i in 0..a.0.len().max(b.0.len()) {
            if i == a.0.len() {
                a.0.push(0);
            }
            let v = u64::from(a.0[i]) + u64::from(b.0.get(i).copied().unwrap_or(0)) + carry;
            a.0[i] = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            a.0.push(carry as u32);
        }
    }

    fn decimal(n: &Big) -> String {
        let mut limbs = n.0.clone();
        let mut out = Vec::new();
        while !limbs.is_empty() {
            let mut rem = 0u64;
            for limb in limbs.iter_mut().rev() {
                let v = (rem << 32) | u64::from(*limb);
                *limb = (v / 10) as u32;
                rem = v % 10;
            }
            out.push(b'0' + rem as u8);
            while limbs.last() == Some(&0) {
                limbs.pop();
            }
        }
        if out.is_empty() {
            out.push(b'0');
        }
        out.reverse();
        String::from_utf8(out).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5_000))]

        #[test]
        fn any_float_printed_reads_back(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            same(&format!("{x}"));
            same(&format!("{x:e}"));
            same(&format!("{x:.25e}"));
        }

        #[test]
        fn decimal_text_reads_as_str_parse(
            sign in "[-+]?",
            int in "[0-9]{0,30}",
            point in "\\.?",
            frac in "[0-9]{0,30}",
            exp in "([eE][-+]?[0-9]{1,4})?",
        ) {
            same(&format!("{sign}{int}{point}{frac}{exp}"));
        }

        #[test]
        fn long_digit_strings_read_as_str_parse(
            digits in "[1-9][0-9]{15,40}",
            point in 0usize..42,
            exp in -360i32..360,
        ) {
            let point = point.min(digits.len());
            same(&format!("{}.{}e{exp}", &digits[..point], &digits[point..]));
        }

        #[test]
        fn near_halfway_reads_as_str_parse(bits in 1u64..0x7FF0_0000_0000_0000) {
            around_midpoint(bits);
        }

        #[test]
        fn any_text_of_number_characters_reads_as_str_parse(text in "[-+0-9.eEinfatyINFATY]{0,12}") {
            same(&text);
        }
    }
}
