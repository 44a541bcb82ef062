"""The demo pipeline's knowledge base: help pages of Tidewater Bikes, an invented city bike-share.

Written for ragmeter's demo; the service, its prices and its rules are fictional.
"""
from __future__ import annotations

from typing import Dict, List

DOCUMENTS: List[Dict[str, str]] = [
    {"title": "Day passes",
     "body": "A day pass costs 9 euros and gives unlimited rides of up to 45 minutes each for 24 hours. "
             "Each minute beyond 45 minutes costs 15 cents. Day passes are bought in the app or at any "
             "station kiosk with a bank card."},
    {"title": "Annual membership",
     "body": "The annual membership costs 79 euros a year and includes unlimited rides of up to 60 minutes. "
             "Students with a valid university card pay 49 euros. Members can cancel within 14 days of "
             "buying for a full refund."},
    {"title": "Electric bikes",
     "body": "Electric bikes cost 20 cents per minute on top of any pass or membership. Their battery "
             "lasts about 50 kilometres. An electric bike is unlocked only when its battery is above 20 percent."},
    {"title": "Returning a bike",
     "body": "Return a bike by pushing it firmly into any free dock until the light turns green. If a "
             "station is full, the kiosk gives 15 extra free minutes to reach the nearest station with space. "
             "A ride ends only when the dock light is green."},
    {"title": "Damaged bikes",
     "body": "Report a damaged bike by pressing the wrench button on the dock after returning it, or in "
             "the app under Report a problem. Riders are never charged for damage they report before their "
             "next ride."},
    {"title": "Lost or stolen bikes",
     "body": "If a bike is stolen during your ride, report it to the police and send the report number "
             "to support within 48 hours. Without a police report, a fee of 300 euros is charged for an "
             "unreturned bike."},
    {"title": "Riding age and helmets",
     "body": "Riders must be at least 16 years old. Helmets are not included, but every annual member "
             "can borrow one free helmet from the central station on Harbour Street."},
    {"title": "Contacting support",
     "body": "Support answers by chat in the app every day from 7:00 to 22:00. The emergency line "
             "0800 555 210 is open day and night for accidents and stolen bikes."},
]
