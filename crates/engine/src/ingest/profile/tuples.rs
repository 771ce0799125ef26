//! Sets and counts of code tuples, the profile's per-row work: a tuple of dictionary codes is
//! packed into one integer index (128 bits wide, so four codes of any size fit), kept in a flat
//! array when the code space is small and in a hash map otherwise.

use rustc_hash::{FxHashMap, FxHashSet};

/// Packs a tuple of codes, each below its dimension, into one index. The key is 128 bits wide:
/// each code is below 2^32, so up to four of them always fit (a 64-bit key overflowed once four
/// dimensions had some 70,000 levels between them, and tuples collided silently).
pub(super) fn pack<const N: usize>(dims: &[u64; N], tuple: [u32; N]) -> u128 {
    const { assert!(N <= 4, "four 32-bit codes fill a 128-bit key") };
    tuple.iter().zip(dims).fold(0u128, |index, (&value, &dim)| {
        index
            .checked_mul(u128::from(dim))
            .and_then(|scaled| scaled.checked_add(u128::from(value)))
            .expect("four codes below 2^32 fit in 128 bits")
    })
}

pub(super) fn unpack<const N: usize>(dims: &[u64; N], mut index: u128) -> [u32; N] {
    let mut tuple = [0; N];
    for (slot, &dim) in tuple.iter_mut().zip(dims).rev() {
        *slot = (index % u128::from(dim)) as u32;
        index /= u128::from(dim);
    }
    tuple
}

/// Code spaces up to this many tuples are kept in flat arrays (a bitmap of at most 8 MiB for a
/// set, 32 MiB of counts); larger ones in hash maps.
pub(super) const DENSE_LIMIT: u64 = 1 << 23;

pub(super) fn dims_of<const N: usize>(dims: [usize; N]) -> ([u64; N], u64) {
    let dims = dims.map(|d| d.max(1) as u64);
    let space = dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d));
    (dims, space.unwrap_or(u64::MAX))
}

/// A set of code tuples: per-row profiling work is an index computation, not a string lookup.
pub(super) struct TupleSet<const N: usize> {
    dims: [u64; N],
    dense: Option<Vec<u64>>,
    sparse: FxHashSet<u128>,
}

impl<const N: usize> TupleSet<N> {
    pub(super) fn new(dims: [usize; N]) -> Self {
        let (dims, space) = dims_of(dims);
        Self {
            dims,
            dense: (space <= DENSE_LIMIT * 8).then(|| vec![0u64; space.div_ceil(64) as usize]),
            sparse: FxHashSet::default(),
        }
    }

    pub(super) fn insert(&mut self, tuple: [u32; N]) {
        let index = pack(&self.dims, tuple);
        match &mut self.dense {
            Some(bits) => bits[(index / 64) as usize] |= 1 << (index % 64),
            None => {
                self.sparse.insert(index);
            }
        }
    }

    /// The tuples, in no particular order (callers sort what they show).
    pub(super) fn iter(&self) -> Box<dyn Iterator<Item = [u32; N]> + '_> {
        match &self.dense {
            Some(bits) => Box::new(
                bits.iter()
                    .enumerate()
                    .flat_map(move |(word_index, &word)| {
                        let base = word_index as u64 * 64;
                        (0..64)
                            .filter(move |bit| word & (1 << bit) != 0)
                            .map(move |bit| unpack(&self.dims, u128::from(base + bit)))
                    }),
            ),
            None => Box::new(self.sparse.iter().map(|&index| unpack(&self.dims, index))),
        }
    }
}

/// Counts per code tuple (see [`TupleSet`]).
pub(super) struct TupleCounts<const N: usize> {
    dims: [u64; N],
    dense: Option<Vec<u32>>,
    sparse: FxHashMap<u128, usize>,
}

impl<const N: usize> TupleCounts<N> {
    pub(super) fn new(dims: [usize; N]) -> Self {
        let (dims, space) = dims_of(dims);
        Self {
            dims,
            dense: (space <= DENSE_LIMIT).then(|| vec![0u32; space as usize]),
            sparse: FxHashMap::default(),
        }
    }

    pub(super) fn add(&mut self, tuple: [u32; N]) {
        let index = pack(&self.dims, tuple);
        match &mut self.dense {
            Some(counts) => counts[index as usize] += 1,
            None => *self.sparse.entry(index).or_default() += 1,
        }
    }

    /// The tuples counted at least once, with their counts.
    pub(super) fn iter(&self) -> Box<dyn Iterator<Item = ([u32; N], usize)> + '_> {
        match &self.dense {
            Some(counts) => Box::new(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, &n)| n > 0)
                    .map(|(index, &n)| (unpack(&self.dims, index as u128), n as usize)),
            ),
            None => Box::new(
                self.sparse
                    .iter()
                    .map(|(&index, &n)| (unpack(&self.dims, index), n)),
            ),
        }
    }
}
