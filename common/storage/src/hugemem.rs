//! Large arrays on transparent huge pages.
//!
//! A point SELECT touches one random page of the buffer pool and one
//! random slot of the primary key's point map. With 4 KiB pages each is a
//! TLB miss as well as a cache miss, and under a hypervisor a TLB miss is a
//! two-dimensional page walk: tens of memory references. PostgreSQL offers
//! `huge_pages` for its shared memory (hugetlbfs, which must be reserved by
//! the administrator; where none are reserved, as on this project's
//! machines, it runs on 4 KiB pages). Here the few large arrays whose
//! elements are reached at random are allocated 2 MiB-aligned and marked
//! `MADV_HUGEPAGE` before they are first written, so that the kernel backs
//! them with 2 MiB pages wherever transparent huge pages are enabled
//! (`always`, or `madvise` as on most distributions) — 256 MiB of buffer
//! pool is then 128 TLB entries instead of 65,536. Where they are disabled
//! the advice is ignored and nothing else changes.
//!
//! Invariant: a [`HugeSlice`] owns `len` initialised elements in one
//! allocation (or mapping), dropped and released together.

use std::alloc::Layout;
use std::ptr::NonNull;

/// Huge page size on x86-64 and the usual arm64 configuration; arrays
/// smaller than this are allocated normally.
pub const HUGE_PAGE: usize = 2 << 20;

/// A fixed-length array of `T`, allocated on huge pages when large.
pub struct HugeSlice<T> {
    ptr: NonNull<T>,
    len: usize,
    backing: Backing,
}

/// Where a [`HugeSlice`]'s memory came from.
enum Backing {
    /// The global allocator, with this layout (small arrays).
    Heap(Layout),
    /// An anonymous mapping of this many bytes, 2 MiB-aligned.
    Mapped(usize),
}

// SAFETY: a HugeSlice owns its elements like a Box<[T]>.
unsafe impl<T: Send> Send for HugeSlice<T> {}
// SAFETY: shared access only hands out &T, like &[T].
unsafe impl<T: Sync> Sync for HugeSlice<T> {}

impl<T> HugeSlice<T> {
    /// `len` elements, the `i`-th made by `f(i)`.
    pub fn from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> HugeSlice<T> {
        let (ptr, backing) = Self::allocate(len, false);
        for i in 0..len {
            // SAFETY: i < len, inside the allocation; each slot written once.
            unsafe { ptr.as_ptr().add(i).write(f(i)) };
        }
        HugeSlice { ptr, len, backing }
    }

    /// `len` all-zero elements, without writing them: a large array's
    /// pages stay untouched (not resident) until used, and are then
    /// faulted in as huge pages.
    ///
    /// # Safety
    ///
    /// The all-zero bit pattern must be a valid `T`.
    pub unsafe fn zeroed(len: usize) -> HugeSlice<T> {
        let (ptr, backing) = Self::allocate(len, true);
        HugeSlice { ptr, len, backing }
    }

    /// Room for `len` elements: from the allocator when small; when
    /// large, an anonymous mapping (zero-filled, untouched) aligned to
    /// 2 MiB and advised onto huge pages before anything is written —
    /// memory written before the advice would stay on 4 KiB pages.
    fn allocate(len: usize, zeroed: bool) -> (NonNull<T>, Backing) {
        let size = std::mem::size_of::<T>()
            .checked_mul(len)
            .expect("array size overflows");
        let layout =
            Layout::from_size_align(size.max(1), std::mem::align_of::<T>()).expect("array layout");
        if size >= HUGE_PAGE && std::mem::align_of::<T>() <= HUGE_PAGE {
            if let Some(p) = map_huge(size) {
                return (p.cast(), Backing::Mapped(size.next_multiple_of(HUGE_PAGE)));
            }
        }
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe {
            if zeroed {
                std::alloc::alloc_zeroed(layout)
            } else {
                std::alloc::alloc(layout)
            }
        };
        let Some(ptr) = NonNull::new(raw.cast::<T>()) else {
            std::alloc::handle_alloc_error(layout)
        };
        (ptr, Backing::Heap(layout))
    }
}

/// A zero-filled anonymous mapping of `size` bytes (rounded up to 2 MiB)
/// at a 2 MiB boundary, advised `MADV_HUGEPAGE`; None if mmap fails.
fn map_huge(size: usize) -> Option<NonNull<u8>> {
    let len = size.next_multiple_of(HUGE_PAGE);
    let over = len.checked_add(HUGE_PAGE)?;
    // SAFETY: a fresh private anonymous mapping; no existing memory is
    // touched.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            over,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return None;
    }
    let start = raw as usize;
    let aligned = start.next_multiple_of(HUGE_PAGE);
    let head = aligned - start;
    let tail = over - head - len;
    // SAFETY: both trims lie inside the mapping just made and outside
    // [aligned, aligned + len); failures only leave address space mapped.
    unsafe {
        if head > 0 {
            libc::munmap(raw, head);
        }
        if tail > 0 {
            libc::munmap((aligned + len) as *mut libc::c_void, tail);
        }
        // Advice, not a request: without THP this changes nothing.
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    NonNull::new(aligned as *mut u8)
}

impl<T> std::ops::Deref for HugeSlice<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised elements at `ptr` (module invariant).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> std::ops::DerefMut for HugeSlice<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for Deref, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for HugeSlice<T> {
    fn drop(&mut self) {
        // SAFETY: the elements are initialised and dropped once; the
        // memory is released the way it was obtained.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(
                self.ptr.as_ptr(),
                self.len,
            ));
            match self.backing {
                Backing::Heap(layout) => std::alloc::dealloc(self.ptr.as_ptr().cast(), layout),
                Backing::Mapped(len) => {
                    libc::munmap(self.ptr.as_ptr().cast(), len);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn small_and_large_arrays_hold_their_elements() {
        let small = HugeSlice::from_fn(10, |i| i as u64 * 3);
        assert_eq!(small.len(), 10);
        assert_eq!(small[9], 27);
        let n = HUGE_PAGE / 8 * 3 + 5;
        let mut large = HugeSlice::from_fn(n, |i| i as u64);
        assert_eq!(large.as_ptr() as usize % HUGE_PAGE, 0, "2 MiB aligned");
        assert_eq!(large[n - 1], n as u64 - 1);
        large[7] = 70;
        assert_eq!(large.iter().filter(|&&v| v == 70).count(), 2);
        let empty: HugeSlice<u64> = HugeSlice::from_fn(0, |_| 0);
        assert!(empty.is_empty());
        // SAFETY: zero is a valid u64.
        let z: HugeSlice<u64> = unsafe { HugeSlice::zeroed(n) };
        assert!(z.iter().all(|&v| v == 0));
    }

    #[test]
    fn elements_are_dropped_once() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        struct D;
        impl Drop for D {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::Relaxed);
            }
        }
        drop(HugeSlice::from_fn(1000, |_| D));
        assert_eq!(DROPS.load(Ordering::Relaxed), 1000);
    }
}
