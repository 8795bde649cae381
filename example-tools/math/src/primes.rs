//! A segmented sieve of Eratosthenes: memory in the square root of the bound, one
//! progress report per segment.

/// Numbers sieved per segment (one byte each): small enough to stay in cache, large
/// enough that a report per segment is cheap.
const SEGMENT: u64 = 1 << 20;

/// How many primes are below `bound`, and the largest; `report(done, bound)` after each
/// segment, `done` being the numbers below it that are sieved.
pub fn count_below(bound: u64, mut report: impl FnMut(u64, u64)) -> (u64, Option<u64>) {
    let small = small_primes(isqrt(bound.saturating_sub(1)));
    let (mut count, mut largest) = (0, None);
    let mut composite = vec![false; SEGMENT as usize];
    let mut low = 2;
    while low < bound {
        let high = (low + SEGMENT).min(bound);
        composite[..(high - low) as usize].fill(false);
        for &p in small.iter().take_while(|&&p| p * p < high) {
            let mut multiple = (low.div_ceil(p) * p).max(p * p);
            while multiple < high {
                composite[(multiple - low) as usize] = true;
                multiple += p;
            }
        }
        for (offset, _) in composite[..(high - low) as usize].iter().enumerate().filter(|(_, c)| !**c) {
            count += 1;
            largest = Some(low + offset as u64);
        }
        report(high, bound);
        low = high;
    }
    (count, largest)
}

/// The primes up to and including `limit`, by a plain sieve.
fn small_primes(limit: u64) -> Vec<u64> {
    let mut composite = vec![false; limit as usize + 1];
    let mut primes = Vec::new();
    for n in 2..=limit {
        if !composite[n as usize] {
            primes.push(n);
            let mut multiple = n * n;
            while multiple <= limit {
                composite[multiple as usize] = true;
                multiple += n;
            }
        }
    }
    primes
}

fn isqrt(n: u64) -> u64 {
    let mut root = (n as f64).sqrt() as u64;
    while root * root > n {
        root -= 1;
    }
    while (root + 1) * (root + 1) <= n {
        root += 1;
    }
    root
}

#[cfg(test)]
mod tests {
    use super::count_below;

    #[test]
    fn counts_match_the_known_values() {
        for (bound, count, largest) in [
            (0, 0, None),
            (2, 0, None),
            (3, 1, Some(2)),
            (10, 4, Some(7)),
            (100, 25, Some(97)),
            (1_000_000, 78_498, Some(999_983)),
            (3_000_000, 216_816, Some(2_999_999)),
        ] {
            assert_eq!(count_below(bound, |_, _| {}), (count, largest), "below {bound}");
        }
    }

    #[test]
    fn each_segment_is_reported_and_the_last_covers_the_bound() {
        let mut reports = Vec::new();
        count_below(3_000_000, |done, total| reports.push((done, total)));
        assert_eq!(reports.len(), 3);
        assert!(reports.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(reports.last(), Some(&(3_000_000, 3_000_000)));
    }
}
