// Tiny inline SVG icons (no emoji font needed, no extra requests).
export function LockIcon({ size = 11 }: { size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 16 16" aria-hidden="true" fill="currentColor" style={{ verticalAlign: '-1px' }}>
      <path d="M4 7V5a4 4 0 1 1 8 0v2h1v8H3V7h1zm2 0h4V5a2 2 0 1 0-4 0v2z" />
    </svg>
  );
}
