/* multiboot64.S: the x86-64 kernel's entry. The loader enters the 32-bit code below in protected mode, paging
   off (multiboot v1 from QEMU's -kernel, multiboot2 from GRUB; the headers are in multiboot.S). It builds an
   identity map of physical memory, turns on PAE, long mode (EFER.LME) and paging, and jumps to kernel_main in
   64-bit mode with the loader's magic and info address as its two arguments.

   The identity map: virtual address = physical address for the first 64 GiB with 2 MiB pages (64 page
   directories in .bss), or for the first 512 GiB with 1 GiB pages where CPUID says the CPU has them
   (pdpe1gb). It is built here, once, and never changed: the capture loop's stores go through it like any
   other memory access. Caching follows the MTRRs (PAT left at its reset value: every page write-back, which
   the MTRRs turn into uncached over MMIO). ett_identity_map_limit holds the first address past the map. */
#ifdef __x86_64__

.set PAGE_PRESENT,    1 << 0
.set PAGE_WRITABLE,   1 << 1
.set PAGE_LARGE,      1 << 7  /* a 2 MiB (PD) or 1 GiB (PDPT) page */
.set PD_COUNT,        64      /* 2 MiB pages: 64 x 1 GiB */
.set CR0_PG,          1 << 31
.set CR4_PAE,         1 << 5
.set MSR_EFER,        0xC0000080
.set EFER_LME,        1 << 8
.set CPUID_PDPE1GB,   1 << 26 /* CPUID 0x80000001 EDX */

.section .bss.paging, "aw", @nobits
.align 4096
.global ett_pml4
ett_pml4:
pml4:
.skip 4096
pdpt:
.skip 4096
page_directories:
.skip 4096 * PD_COUNT

.section .data
.align 8
.global ett_identity_map_limit
ett_identity_map_limit:
.quad 0

.section .rodata
.align 8
gdt64:
.quad 0
.quad 0x00AF9A000000FFFF  /* 0x08: 64-bit code (L=1) */
.quad 0x00CF92000000FFFF  /* 0x10: data */
gdt64_end:
gdt64_pointer:
.short gdt64_end - gdt64 - 1
.quad gdt64

.section .text
.code32
.global _start
.type _start, @function
_start:
    cli
    cld
    mov %eax, %esi            /* magic */
    mov %ebx, %ebp            /* info address */
    /* Zero .bss (the stack and the page tables with it). */
    mov $__bss_start, %edi
    mov $__bss_end, %ecx
    sub %edi, %ecx
    xor %eax, %eax
    rep stosb
    mov $stack_top, %esp

    /* PML4[0] -> PDPT. */
    mov $pdpt, %eax
    or $(PAGE_PRESENT | PAGE_WRITABLE), %eax
    mov %eax, pml4

    /* 1 GiB pages if the CPU has them: PDPT[i] = i GiB, 512 entries. */
    mov $0x80000000, %eax
    cpuid
    cmp $0x80000001, %eax
    jb 2f
    mov $0x80000001, %eax
    cpuid
    test $CPUID_PDPE1GB, %edx
    jz 2f
    xor %ecx, %ecx
1:  mov %ecx, %eax
    shl $30, %eax
    or $(PAGE_PRESENT | PAGE_WRITABLE | PAGE_LARGE), %eax
    mov %ecx, %edx
    shr $2, %edx              /* high dword: i >> 2 (i GiB >> 32) */
    mov %eax, pdpt(, %ecx, 8)
    mov %edx, pdpt + 4(, %ecx, 8)
    inc %ecx
    cmp $512, %ecx
    jb 1b
    movl $0, ett_identity_map_limit
    movl $(512 << 30 >> 32), ett_identity_map_limit + 4
    jmp 4f

    /* 2 MiB pages: PDPT[i] -> page_directories[i], PD entry j = j * 2 MiB over all 64 directories. */
2:  xor %ecx, %ecx
3:  mov %ecx, %eax
    shl $12, %eax
    add $page_directories, %eax
    or $(PAGE_PRESENT | PAGE_WRITABLE), %eax
    mov %eax, pdpt(, %ecx, 8)
    inc %ecx
    cmp $PD_COUNT, %ecx
    jb 3b
    xor %ecx, %ecx
5:  mov %ecx, %eax
    shl $21, %eax
    or $(PAGE_PRESENT | PAGE_WRITABLE | PAGE_LARGE), %eax
    mov %ecx, %edx
    shr $11, %edx             /* high dword: j >> 11 (j * 2 MiB >> 32) */
    mov %eax, page_directories(, %ecx, 8)
    mov %edx, page_directories + 4(, %ecx, 8)
    inc %ecx
    cmp $(PD_COUNT * 512), %ecx
    jb 5b
    movl $0, ett_identity_map_limit
    movl $(PD_COUNT >> 2), ett_identity_map_limit + 4

    /* PAE, the page tables, long mode, paging: the CPU is then in compatibility mode until the far jump. */
4:  mov %cr4, %eax
    or $CR4_PAE, %eax
    mov %eax, %cr4
    mov $pml4, %eax
    mov %eax, %cr3
    mov $MSR_EFER, %ecx
    rdmsr
    or $EFER_LME, %eax
    wrmsr
    mov %cr0, %eax
    or $CR0_PG, %eax
    mov %eax, %cr0
    lgdt gdt64_pointer
    ljmp $0x08, $long_mode
.size _start, . - _start

.code64
long_mode:
    mov $0x10, %eax
    mov %eax, %ds
    mov %eax, %es
    mov %eax, %fs
    mov %eax, %gs
    mov %eax, %ss
    mov $stack_top, %esp      /* zero-extends into rsp */
    mov %esi, %edi            /* magic: first argument (zero-extended) */
    mov %ebp, %esi            /* info address: second */
    xor %ebp, %ebp
    and $-16, %rsp            /* 16-byte aligned at the call, as the System V ABI expects */
    call kernel_main
7:  cli
    hlt
    jmp 7b

#endif
